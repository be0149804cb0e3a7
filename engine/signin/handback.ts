import { createHash } from 'node:crypto';
import type { GatewayParams } from './gateway-params.js';

/**
 * Where the browser goes after sign-in so the gateway opens access: a GET
 * (a link or a GET form) or a POST form of `fields` to `url`. Part of the
 * verify answer as `handback` when the request carried gateway parameters.
 */
export interface Handback {
  method: 'GET' | 'POST';
  url: string;
  fields: Record<string, string>;
}

/** A one-time username/password pair the gateway will present to our RADIUS server. */
export interface GatewayCredential {
  username: string;
  password: string;
}

export interface HandbackOptions {
  /** Needed for UAM and MikroTik (they log in over RADIUS); unused for openNDS. */
  credential: GatewayCredential | null;
  /** The hotspot's UAM secret (chilli's uamsecret); for openNDS level 1 it is the faskey. */
  secret: string | null;
  /** UAM: CHAP (default) or the PAP password form. */
  uamAuth: 'chap' | 'pap';
  /** Where the guest lands after the gateway opens access: the hotspot's redirect_url, else the gateway's original URL. */
  landingUrl: string | null;
}

const md5 = (...parts: Buffer[]): Buffer => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

/**
 * The challenge chilli checks against: with a UAM secret MD5(challenge ||
 * uamsecret), else the challenge as sent. Exactly as CoovaChilli's
 * chilli_response utility and redir.c form it (src/chilli_response.c in
 * coova/coova-chilli: challenge hex -> 16 bytes, MD5Update(challenge),
 * MD5Update(uamsecret), MD5Final).
 */
function effectiveChallenge(challengeHex: string, secret: string | null): Buffer {
  const challenge = Buffer.from(challengeHex, 'hex');
  return secret ? md5(challenge, Buffer.from(secret, 'utf8')) : challenge;
}

/**
 * The CHAP `response` chilli's /logon expects (hex): MD5(ident || password ||
 * challenge'), ident 0 (chilli_response's default chap_ident). RFC 1994 §4.1
 * CHAP-MD5 with the UAM secret folded into the challenge.
 */
export function chapResponse(challengeHex: string, password: string, secret: string | null, ident = 0): string {
  return md5(Buffer.from([ident]), Buffer.from(password, 'utf8'), effectiveChallenge(challengeHex, secret)).toString('hex');
}

/**
 * The PAP form (`password` hex): each password byte XOR challenge'[i mod 16],
 * as chilli_response -pap writes it (the password's length, not padded).
 */
export function papPassword(challengeHex: string, password: string, secret: string | null): string {
  const c = effectiveChallenge(challengeHex, secret);
  const p = Buffer.from(password, 'utf8');
  const out = Buffer.alloc(p.length);
  for (let i = 0; i < p.length; i++) out[i] = p[i]! ^ c[i % 16]!;
  return out.toString('hex');
}

/** openNDS FAS level 1: the token to return is sha256(hid || faskey), hex (openNDS docs, fas.rst "Level 1"). */
export function openNdsToken(hid: string, fasKey: string): string {
  return createHash('sha256').update(hid + fasKey).digest('hex');
}

/**
 * The hand-back for a gateway family. Null when nothing can be handed back:
 * UAM or MikroTik without a credential, openNDS level 1 without a faskey.
 * Pure: the credential is made beforehand (UamCredentials.issue).
 */
export function buildHandback(gw: GatewayParams, o: HandbackOptions): Handback | null {
  switch (gw.kind) {
    case 'uam': {
      if (!o.credential) return null;
      const { username, password } = o.credential;
      const fields: Record<string, string> = { username };
      if (o.uamAuth === 'pap') fields.password = papPassword(gw.challenge, password, o.secret);
      else fields.response = chapResponse(gw.challenge, password, o.secret);
      const userurl = o.landingUrl ?? gw.userurl;
      if (userurl) fields.userurl = userurl;
      const host = gw.uamip.includes(':') ? `[${gw.uamip}]` : gw.uamip;
      return { method: 'GET', url: `http://${host}:${gw.uamport}/logon`, fields };
    }
    case 'mikrotik': {
      if (!o.credential) return null;
      const fields: Record<string, string> = { username: o.credential.username, password: o.credential.password };
      const dst = o.landingUrl ?? gw.origUrl;
      if (dst) fields.dst = dst;
      return { method: 'POST', url: gw.loginUrl, fields };
    }
    case 'opennds': {
      const tok = gw.level === 0 ? gw.tok : o.secret ? openNdsToken(gw.hid, o.secret) : null;
      if (!tok) return null;
      const fields: Record<string, string> = { tok };
      const redir = o.landingUrl ?? gw.redir;
      if (redir) fields.redir = redir;
      return { method: 'GET', url: gw.authUrl, fields };
    }
  }
}

/** A GET hand-back as one URL (for a redirect or a link). */
export function handbackUrl(h: Handback): string {
  if (h.method !== 'GET') return h.url;
  const u = new URL(h.url);
  for (const [k, v] of Object.entries(h.fields)) u.searchParams.set(k, v);
  return u.toString();
}
