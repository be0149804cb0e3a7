export { startHttp, allRoutes, type HttpServer } from './server.js';
export { buildOpenApi } from './openapi.js';
export { checkRuntime } from './uws.js';
