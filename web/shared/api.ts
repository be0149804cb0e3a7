import { format, type Translate } from './i18n.js';
import { clearSession, loadSession, type Session } from './session.js';

/**
 * The one way the pages reach the service: the public API (/v1/...), the
 * console paths (/api/v1/...) and the dashboard API (/api/v1/tenants/me/...),
 * same origin, with the session's token as `Authorization: Bearer`. No other
 * path and no private back door: what a page shows, the API would tell any
 * operator holding the same credential.
 */

/** A refused request: the catalogue's code (engine/errors.ts) and the body as sent. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, readonly body: Record<string, unknown>) {
    super(`${status} ${code}`);
    this.name = 'ApiError';
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the service answers 401 to a signed-in request: the app returns to sign-in. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | undefined | null>;
  /** A file upload (multipart/form-data, the browser sets the boundary); instead of `body`. */
  form?: FormData;
  /** Without the session's token (sign-in itself). */
  anonymous?: boolean;
  signal?: AbortSignal;
}

function urlOf(path: string, query?: RequestOptions['query']): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function send(path: string, opts: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const session: Session | null = opts.anonymous ? null : loadSession();
  if (session) headers.authorization = `Bearer ${session.token}`;
  let res: Response;
  try {
    res = await fetch(urlOf(path, opts.query), {
      method: opts.method ?? 'GET', headers, signal: opts.signal, credentials: 'omit', cache: 'no-store',
      body: opts.form ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', {});
  }
  if (res.ok) return res;
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON (a proxy's page): the status alone says what happened
  }
  if (res.status === 401 && !opts.anonymous) {
    clearSession();
    for (const fn of unauthorizedListeners) fn();
  }
  throw new ApiError(res.status, typeof body.error === 'string' ? body.error : `http_${res.status}`, body);
}

/** A JSON request; resolves to the parsed body. */
export async function request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await send(path, opts);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A file download (an evidence pack): the body as a Blob and the name the service gave it. */
export async function download(path: string, query: RequestOptions['query']): Promise<{ blob: Blob; filename: string }> {
  const res = await send(path, { query });
  const disposition = res.headers.get('content-disposition') ?? '';
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'download';
  return { blob: await res.blob(), filename };
}

/** Saves a Blob through a temporary link (the browser's download, no new window). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Any failure as a sentence of the catalogue: its code's message when there
 * is one, else the generic one with the HTTP status. Never the raw body.
 */
export function errorSentence(err: unknown, t: Translate): string {
  if (!(err instanceof ApiError)) return t('err_network');
  if (err.status === 0) return t('err_network');
  const key = `err_${err.code}`;
  const text = t(key);
  if (text === key) return format(t('err_generic'), { status: err.status });
  if (err.code === 'validation_failed') return format(text, { detail: validationDetail(err.body) });
  return text;
}

/** The fields a validation error names ("count, max_uses"), or its message when it names none. */
function validationDetail(body: Record<string, unknown>): string {
  const details = Array.isArray(body.details) ? body.details : [];
  const fields = details.map((d) => (d && typeof d === 'object' && 'field' in d ? String((d as { field: unknown }).field) : '')).filter(Boolean);
  return fields.length ? [...new Set(fields)].join(', ') : String(body.message ?? '');
}
