import { request, type RequestOptions } from '../shared/index.js';

/** The dashboard API's prefix: the page reads nothing else (docs/dashboard-api.md). */
export const DASHBOARD_API = '/api/v1/tenants/me/';

/** GET a dashboard path. */
export const get = <T>(path: string, signal: AbortSignal, query?: RequestOptions['query']): Promise<T> =>
  request<T>(DASHBOARD_API + path, { signal, query });

/** POST a dashboard path (moving an incident). */
export const post = <T>(path: string): Promise<T> => request<T>(DASHBOARD_API + path, { method: 'POST' });
