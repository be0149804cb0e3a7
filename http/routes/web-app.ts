import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Errors, projectPath, type Engine } from '../../engine/index.js';
import { acceptsEncoding } from '../accept-encoding.js';
import type { Reply } from '../respond.js';
import { route, type Route, type Surface } from '../router.js';
import { authSessionRoutes } from './auth-session.js';

/** One file of a built app, in the three encodings the build wrote (scripts/build-web.ts). */
interface Asset {
  type: string;
  plain: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
}

interface BuiltApp {
  index: Asset;
  /** By file name (content-hashed: a name never changes meaning). */
  assets: Map<string, Asset>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.json': 'application/json',
};

/**
 * The pages load only their own script and style (no inline code, nothing
 * from elsewhere) and talk only to this origin. Styles set from script
 * (uPlot, Preact's style props) go through the CSSOM, which style-src does
 * not restrict, so no 'unsafe-inline' is needed.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; "
  + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const COMMON = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', vary: 'Accept-Encoding' };
/** The HTML names the current hashed files, so it is revalidated on every load. */
const INDEX_HEADERS = { ...COMMON, 'cache-control': 'no-cache' };
/** A hashed file never changes: cached for a year without revalidation. */
const ASSET_HEADERS = { ...COMMON, 'cache-control': 'public, max-age=31536000, immutable' };

function readAsset(file: string): Asset {
  const other = (ext: string): Buffer | null => (existsSync(file + ext) ? readFileSync(file + ext) : null);
  return { type: TYPES[extname(file)] ?? 'application/octet-stream', plain: readFileSync(file), gzip: other('.gz'), br: other('.br') };
}

/** Reads dist/web/<app> once, at start-up; null when the web build has not run. */
function loadApp(app: string): BuiltApp | null {
  const dir = projectPath('dist', 'web', app);
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  for (const f of readdirSync(join(dir, 'assets'))) {
    if (!f.endsWith('.gz') && !f.endsWith('.br') && !f.endsWith('.map')) assets.set(f, readAsset(join(dir, 'assets', f)));
  }
  return { index: readAsset(join(dir, 'index.html')), assets };
}

/** The asset in the best encoding the browser accepts: brotli, else gzip, else as is. */
function assetReply(a: Asset, acceptEncoding: string, headers: Record<string, string>): Reply {
  if (a.br && acceptsEncoding(acceptEncoding, 'br')) return { status: 200, body: null, text: a.br, contentType: a.type, headers: { ...headers, 'content-encoding': 'br' } };
  if (a.gzip && acceptsEncoding(acceptEncoding, 'gzip')) return { status: 200, body: null, text: a.gzip, contentType: a.type, headers: { ...headers, 'content-encoding': 'gzip' } };
  return { status: 200, body: null, text: a.plain, contentType: a.type, headers };
}

/** The routes of one app: its page, its assets, and `/` too when its surface has its own port. */
function appRoutes(engine: Engine, app: 'console' | 'dashboard', ownPort: boolean): Route[] {
  const built = loadApp(app);
  if (!built) engine.log.warn({ app }, 'web app not built (npm run build); its page answers 503');
  const surface: Surface = app;
  const page = (path: string): Route => route({
    method: 'get', path, surface, auth: false, headers: ['accept-encoding'], responseType: 'text/html',
    summary: `The ${app} (a single-page app; it signs in through /api/v1/auth/session and uses the public and dashboard APIs)`,
    handler: ({ headers }) => {
      if (!built) throw Errors.SERVICE_UNAVAILABLE(`The ${app} page (not built)`);
      return assetReply(built.index, headers['accept-encoding'] ?? '', INDEX_HEADERS);
    },
  });
  const assets = route({
    method: 'get', path: `/${app}/assets/:file`, surface, auth: false, headers: ['accept-encoding'], responseType: 'application/octet-stream',
    summary: `The ${app}'s content-hashed scripts and styles (immutable)`, errors: { 404: 'not_found' },
    handler: ({ params, headers }) => {
      const a = built?.assets.get(params[0]!);
      if (!a) throw Errors.NOT_FOUND();
      return assetReply(a, headers['accept-encoding'] ?? '', ASSET_HEADERS);
    },
  });
  return ownPort ? [page(`/${app}`), page('/'), assets] : [page(`/${app}`), assets];
}

/** The console at /console and the dashboard at /dashboard (each also at / of CONSOLE_PORT / DASHBOARD_PORT), and their sign-in. */
export function webAppRoutes(engine: Engine): Route[] {
  const cfg = engine.config;
  return [
    ...authSessionRoutes(engine),
    ...appRoutes(engine, 'console', cfg.consolePort !== undefined),
    ...appRoutes(engine, 'dashboard', cfg.dashboardPort !== undefined),
  ];
}
