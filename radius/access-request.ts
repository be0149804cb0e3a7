import { normalizeMac, type AccessRequestMsg, type ChapResponse, type NasRecord } from '../engine/index.js';
import { Attr } from './attributes.js';
import { HEADER_LENGTH, readIPv4, readString, readUint32 } from './codec.js';
import type { RadiusCrypto } from './radius-crypto.js';

/**
 * Translates an Access-Request, already framed and authenticated, into the
 * engine's message in one pass over its attributes. Returns null when an
 * attribute the engine relies on is malformed (a Framed-IP-Address that is
 * not 4 octets, a User-Password of a length RFC 2865 §5.2 does not allow):
 * the server drops such a packet.
 *
 * MAC: Calling-Station-Id (RFC 3580 §3.21), else User-Name when it is a MAC
 * (MAC-authentication NASes send it there), canonicalised to AA:BB:CC:DD:EE:FF.
 *
 * Also null when its Proxy-State attributes leave no room for a reply: every
 * reply echoes them all (RFC 2865 §5.33) within 4096 octets, and a request
 * answered with nothing after its voucher was redeemed would spend a use on
 * every retransmission. Refused before the engine sees it.
 */
export function readAccessRequest(buf: Buffer, len: number, nas: NasRecord, crypto: RadiusCrypto): AccessRequestMsg | null {
  let userName = '';
  let calling = '';
  let called = '';
  let passwordAt = -1;
  let chapAt = -1;
  let challengeAt = -1;
  let framedIp: string | undefined;
  let nasPortId: string | undefined;
  let nasPort: number | undefined;
  let proxyState = 0;
  for (let at = HEADER_LENGTH; at < len; at += buf[at + 1]!) {
    switch (buf[at]) {
      case Attr.PROXY_STATE: proxyState += buf[at + 1]!; break;
      case Attr.USER_NAME: userName = readString(buf, at); break;
      case Attr.USER_PASSWORD: passwordAt = at; break;
      case Attr.CHAP_PASSWORD: chapAt = at; break;
      case Attr.CHAP_CHALLENGE: challengeAt = at; break;
      case Attr.CALLING_STATION_ID: calling = readString(buf, at); break;
      case Attr.CALLED_STATION_ID: called = readString(buf, at); break;
      case Attr.NAS_PORT_ID: nasPortId = readString(buf, at); break;
      case Attr.NAS_PORT: {
        // RFC 2865 §5.5: 4 octets. Only shown on the dashboard, so a malformed one is left out, not a reason to drop.
        const n = readUint32(buf, at);
        if (n >= 0) nasPort = n;
        break;
      }
      case Attr.FRAMED_IP_ADDRESS: {
        const ip = readIPv4(buf, at);
        if (ip === null) return null;
        framedIp = ip;
        break;
      }
    }
  }
  if (proxyState > MAX_PROXY_STATE_OCTETS) return null;
  // RFC 2865 §5.3: CHAP-Password is exactly 19 octets (type, length, ident, 16-octet response),
  // and a request carries either it or User-Password, never both.
  let chap: ChapResponse | undefined;
  if (chapAt >= 0) {
    if (buf[chapAt + 1] !== 19 || passwordAt >= 0) return null;
    // §5.40: a CHAP-Challenge of at least 5 octets of value; without one the Request Authenticator is the challenge.
    let challenge: Buffer;
    if (challengeAt >= 0) {
      if (buf[challengeAt + 1]! < 7) return null;
      challenge = Buffer.from(buf.subarray(challengeAt + 2, challengeAt + buf[challengeAt + 1]!));
    } else {
      challenge = Buffer.from(buf.subarray(4, HEADER_LENGTH));
    }
    chap = { ident: buf[chapAt + 2]!, response: Buffer.from(buf.subarray(chapAt + 3, chapAt + 19)), challenge };
  }
  let password: string | undefined;
  if (passwordAt >= 0) {
    const p = crypto.decryptUserPassword(buf, passwordAt, nas.secret, buf.subarray(4, HEADER_LENGTH));
    if (p === null) return null;
    password = p;
  }
  return {
    nas,
    mac: macOf(calling, userName),
    userName,
    password,
    chap,
    framedIp,
    ssid: ssidOf(called),
    nasPortId,
    nasPort,
    calledStationId: called || undefined,
  };
}

/**
 * The Proxy-State octets a reply can echo: 4096 less the most our own
 * attributes take (AccessReplyEncoder: header 20, Message-Authenticator 18,
 * Session- and Idle-Timeout 12, Class 23, eight integer VSAs 96, the MikroTik
 * rate string at most 33: 202), rounded up to 256 for a Reply-Message.
 */
export const MAX_PROXY_STATE_OCTETS = 4096 - 256;

/** Calling-Station-Id, else User-Name, as a canonical MAC; '' when neither is one. */
export function macOf(callingStationId: string, userName: string): string {
  return (callingStationId && normalizeMac(callingStationId)) || (userName && normalizeMac(userName)) || '';
}

/**
 * The SSID in a Called-Station-Id of the form "AP-MAC:SSID" (RFC 3580 §3.20:
 * "00-10-A4-23-19-C0:AP1"); the MAC may also be colon-separated or bare hex.
 * undefined when there is no SSID part. A character scan rather than
 * normalizeMac: only the shape of the prefix matters here, and this runs per packet.
 */
export function ssidOf(calledStationId: string): string | undefined {
  const n = calledStationId.length;
  if (n > 18 && calledStationId.charCodeAt(17) === 58 /* ':' */ && isMac17(calledStationId)) return calledStationId.slice(18);
  if (n > 13 && calledStationId.charCodeAt(12) === 58 && isHex(calledStationId, 0, 12)) return calledStationId.slice(13);
  return undefined;
}

/** "AA-BB-CC-DD-EE-FF" or "AA:BB:CC:DD:EE:FF" at the start of `s`. */
function isMac17(s: string): boolean {
  const sep = s.charCodeAt(2);
  if (sep !== 45 /* '-' */ && sep !== 58 /* ':' */) return false;
  for (let i = 0; i < 17; i += 3) {
    if (!isHex(s, i, i + 2)) return false;
    if (i < 15 && s.charCodeAt(i + 2) !== sep) return false;
  }
  return true;
}

function isHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    const lower = c | 0x20; // folds A-F to a-f (and nothing else onto a-f)
    if (!((c >= 48 && c <= 57) || (lower >= 97 && lower <= 102))) return false;
  }
  return true;
}
