import { isIP } from 'node:net';
import { Errors } from '../errors.js';
import { normalizeMac } from '../ids.js';

/**
 * What a gateway put in the URL it redirected the guest's browser to, by
 * family (docs/portal-gateways.md has an example URL of each). MAC
 * authentication puts nothing there: the NAS asks RADIUS by MAC, so it has
 * no entry here and a request without gateway parameters is that case.
 */
export type GatewayParams = UamParams | MikrotikParams | OpenNdsParams;

/** CoovaChilli / ChilliSpot UAM: `res uamip uamport challenge mac ip called nasid userurl`. */
export interface UamParams {
  kind: 'uam';
  uamip: string;
  uamport: number;
  /** 16 bytes as 32 hex digits, as chilli sends it. */
  challenge: string;
  mac: string | null;
  ip: string;
  called: string;
  nasid: string;
  userurl: string;
}

/** MikroTik hotspot login form: `link-login-only link-orig mac ip`. */
export interface MikrotikParams {
  kind: 'mikrotik';
  loginUrl: string;
  origUrl: string;
  mac: string | null;
  ip: string;
}

/**
 * openNDS FAS. Level 0 sends the token itself (`tok`) and an `authaction`
 * URL; level 1 sends only `hid` (a hash of the token) and `gatewayaddress`,
 * and the token to hand back is sha256(hid + faskey).
 */
export interface OpenNdsParams {
  kind: 'opennds';
  level: 0 | 1;
  /** http://<gatewayaddress>/<authdir>/ */
  authUrl: string;
  tok: string;
  hid: string;
  redir: string;
  mac: string | null;
  ip: string;
  gatewayname: string;
}

/** Every query name a family uses: these travel with the page as the `gateway` field. */
const NAMES = [
  'res', 'uamip', 'uamport', 'challenge', 'called', 'nasid', 'userurl', 'sessionid', 'md',
  'link-login-only', 'link-login', 'link-orig', 'link-orig-esc',
  'clientip', 'clientmac', 'gatewayname', 'gatewayaddress', 'tok', 'hid', 'redir', 'authaction', 'authdir', 'originurl',
  'mac', 'ip',
] as const;
const NAME_SET: ReadonlySet<string> = new Set(NAMES);
const MAX_VALUE = 2000;

type Source = URLSearchParams | Record<string, unknown>;

function get(src: Source, name: string): string {
  const v = src instanceof URLSearchParams ? src.get(name) : src[name];
  return typeof v === 'string' ? v.slice(0, MAX_VALUE) : '';
}

function bad(field: string, message: string): never {
  throw Errors.VALIDATION_FAILED(`gateway parameter ${field} ${message}`, [{ field: `gateway.${field}`, message }]);
}

/** An http(s) URL, else a validation error: the browser is sent there, so never javascript: or data:. */
function httpUrl(field: string, raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return bad(field, 'must be an http or https URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') bad(field, 'must be an http or https URL');
  return u.toString();
}

/** A MAC as gateways write it (chilli: 5C-1D-D9-20-A0-C1); a randomised (locally administered) one is as good as any. */
function macOf(raw: string): string | null {
  return raw ? normalizeMac(raw) : null;
}

/**
 * Reads a gateway's redirect parameters from a query string or a JSON
 * `gateway` object. Returns null when none of the families is present (MAC
 * authentication, or a guest who opened the page by hand). Throws
 * validation_failed for a family present with unusable values: the hand-back
 * sends the browser to addresses built from them.
 */
export function parseGatewayParams(src: Source): GatewayParams | null {
  if (get(src, 'uamip') && get(src, 'challenge')) {
    const uamip = get(src, 'uamip');
    if (isIP(uamip) === 0) bad('uamip', 'must be an IP address');
    const port = Number(get(src, 'uamport') || '3990');
    if (!Number.isInteger(port) || port < 1 || port > 65535) bad('uamport', 'must be a TCP port');
    const challenge = get(src, 'challenge').toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(challenge)) bad('challenge', 'must be 32 hexadecimal digits');
    const userurl = get(src, 'userurl');
    return {
      kind: 'uam', uamip, uamport: port, challenge, mac: macOf(get(src, 'mac')), ip: get(src, 'ip'),
      called: get(src, 'called'), nasid: get(src, 'nasid'), userurl: userurl ? httpUrl('userurl', userurl) : '',
    };
  }
  const loginOnly = get(src, 'link-login-only');
  if (loginOnly) {
    const orig = get(src, 'link-orig');
    return {
      kind: 'mikrotik', loginUrl: httpUrl('link-login-only', loginOnly), origUrl: orig ? httpUrl('link-orig', orig) : '',
      mac: macOf(get(src, 'mac')), ip: get(src, 'ip'),
    };
  }
  const tok = get(src, 'tok');
  const hid = get(src, 'hid');
  if (tok || hid) {
    if (!/^[0-9A-Za-z]{1,128}$/.test(tok || hid)) bad(tok ? 'tok' : 'hid', 'must be letters and digits');
    const authUrl = openNdsAuthUrl(src);
    const redir = get(src, 'redir') || get(src, 'originurl');
    return {
      kind: 'opennds', level: tok ? 0 : 1, authUrl, tok, hid, redir: redir ? httpUrl('redir', redir) : '',
      mac: macOf(get(src, 'clientmac')), ip: get(src, 'clientip'), gatewayname: get(src, 'gatewayname'),
    };
  }
  return null;
}

/**
 * The gateway's authentication URL. Level 0 sends `authaction`
 * (http://gw:2050/opennds_auth/?clientip=...; its own query is cut off, the
 * rest of it arrives as our parameters); level 1 sends `gatewayaddress`
 * (ip:port) and optionally `authdir`.
 */
function openNdsAuthUrl(src: Source): string {
  const action = get(src, 'authaction');
  if (action) {
    const u = new URL(httpUrl('authaction', action));
    return `${u.protocol}//${u.host}${u.pathname}`;
  }
  const address = get(src, 'gatewayaddress');
  if (!address || !/^[0-9A-Za-z.:[\]-]{1,64}$/.test(address)) bad('gatewayaddress', 'must be host:port of the gateway');
  const dir = get(src, 'authdir') || 'opennds_auth';
  if (!/^[0-9A-Za-z_-]{1,64}$/.test(dir)) bad('authdir', 'must be a directory name');
  return httpUrl('gatewayaddress', `http://${address}/${dir}/`);
}

/** Longest `fas` value read: openNDS's own query buffer (QUERYMAXLEN 4096) base64-encoded, with room. */
const MAX_FAS = 8192;

/**
 * A redirect query as openNDS 9 really sends it at FAS level 1, made into
 * plain parameters the rest of the portal reads (a query without `fas` comes
 * back unchanged). Three things seen on openNDS 9.10.0 in namespaces
 * (test/e2e/opennds-gateway.test.ts), none of them in its FAS documentation's
 * examples:
 * - all parameters travel in one `fas` value: base64 of `hid=.., clientip=..,
 *   clientmac=.., client_type=.., gatewayname=.., gatewayurl=.., version=..,
 *   gatewayaddress=.., gatewaymac=.., originurl=.., clientif=.., themespec=..`,
 *   pairs joined by ", " and values URL-encoded (openNDS's QUERYSEPARATOR and
 *   construct_querystring); a `+` of the base64 may arrive as a space;
 * - `?fas=` (level 0: `?authaction=`) is appended to `faspath` verbatim, so a
 *   faspath holding our query (`/portal?hotspot_id=hs_x`) arrives as
 *   hotspot_id `hs_x?fas=...`;
 * - `gatewayname` arrives with " Node:<gateway mac> " appended. With no
 *   hotspot_id in the URL the hotspot is the gatewayname without that suffix,
 *   so `gatewayname <hotspot id>` and `faspath /portal` are enough to set up.
 */
export function unpackOpenNdsQuery(query: URLSearchParams): URLSearchParams {
  const glued = query.get('hotspot_id') ?? '';
  const at = glued.indexOf('?');
  let fas = query.get('fas');
  if (at < 0 && fas === null && (glued || !query.get('gatewayname'))) return query;
  const out = new URLSearchParams(query);
  if (at >= 0) {
    out.set('hotspot_id', glued.slice(0, at));
    for (const [k, v] of new URLSearchParams(glued.slice(at + 1))) out.set(k, v);
    fas = out.get('fas');
  }
  if (fas !== null && fas.length <= MAX_FAS) {
    out.delete('fas');
    const text = Buffer.from(fas.replace(/ /g, '+'), 'base64').toString('utf8');
    for (const pair of text.split(', ')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) continue; // the "(null)(null)..." tail of unset custom parameters
      const k = pair.slice(0, eq).trim();
      if (!NAME_SET.has(k)) continue;
      out.set(k, decodeOr(pair.slice(eq + 1)));
    }
  }
  if (!out.get('hotspot_id')) {
    const hs = (out.get('gatewayname') ?? '').split(' Node:')[0]!.trim();
    if (/^[0-9A-Za-z_-]{1,64}$/.test(hs)) out.set('hotspot_id', hs);
  }
  return out;
}

function decodeOr(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/**
 * The gateway parameters of a request, as one query string: what the page
 * carries as its hidden `gateway` field so a form POST (and the state kept
 * after it) still knows where to hand the guest back. Only known names pass.
 */
export function gatewayQuery(src: Source): string {
  const out = new URLSearchParams();
  for (const name of NAMES) {
    const v = get(src, name);
    if (v) out.set(name, v);
  }
  return out.toString();
}

/** A `gateway` field as the page or a JSON caller sends it (query string or object) as parameters. */
export function gatewayFrom(field: unknown): URLSearchParams | Record<string, unknown> | null {
  if (typeof field === 'string') return field ? new URLSearchParams(field) : null;
  if (field !== null && typeof field === 'object' && !Array.isArray(field)) {
    const picked: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(field)) if (NAME_SET.has(k)) picked[k] = v;
    return picked;
  }
  return null;
}
