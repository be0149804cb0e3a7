import { readFileSync } from 'node:fs';
import type { RemoteInfo, Socket } from 'node:dgram';
import { checkFraming, findAttribute, HEADER_LENGTH } from '../radius/codec.js';
import { RadiusCrypto } from '../radius/radius-crypto.js';
import { udpSocket } from '../radius/udp-socket.js';

/**
 * The floor of bench/radius-vs-freeradius.ts: the least Node.js code that
 * answers the bench's RADIUS as a server must, so the engine and FreeRADIUS
 * can both be read against what Node's UDP path costs on the machine in the
 * same run (issue 22, item 1). Honest both ways:
 *
 * - What it does, as the engine does it: one UDP socket per port on the
 *   address the bench names, sockets made as the engine makes them
 *   (radius/udp-socket.ts); per datagram the framing check, the code, the
 *   RFC 5080 duplicate check (a resend inside 5 s gets the same reply bytes),
 *   and the checks that make an answer safe: an Access-Request's
 *   Message-Authenticator (HMAC-MD5, required, as the bench's NAS client
 *   requires it on both servers), an Accounting-Request's Request
 *   Authenticator; the User-Name looked up among the authorised MACs (a Set,
 *   taken verbatim as FreeRADIUS's `files` takes it); an Access-Accept with the
 *   two reply attributes FreeRADIUS sends (Session-Timeout,
 *   WISPr-Bandwidth-Max-Down) and a Message-Authenticator, signed; an
 *   Accounting-Response, signed. The crypto is the engine's own
 *   (radius/radius-crypto.ts over radius/md5.ts, the faster of the two on a
 *   recorded A/B: bench/results/radius-threads.md).
 * - What it leaves out, each a feature of the engine: NAS clients by address
 *   (one secret here), MAC canonicalisation, the session's live state and its
 *   quota, time and SSID checks, the per-session reply (idle time-out,
 *   bandwidth profile, Class, accounting interval), accounting's durable write
 *   (Redis) and quota check, the decision list and dashboard counts, metrics,
 *   logs and the hand-off to the actors. FreeRADIUS in the bench stores no
 *   accounting either: the floor's interim is FreeRADIUS's own work in Node.
 *
 * Run as its own process: `node dist/bench/radius-floor.js` with FLOOR_HOST,
 * FLOOR_SECRET, FLOOR_MAC_FILE (one MAC a line), FLOOR_SESSION_TIMEOUT (s),
 * FLOOR_BANDWIDTH_DOWN (bit/s). Prints `{"ready":true,"radius":{"auth":a,"acct":b}}`;
 * stops on SIGTERM.
 */

const HOST = process.env.FLOOR_HOST ?? '127.0.0.1';
const SECRET = process.env.FLOOR_SECRET ?? '';
const MACS = new Set(readFileSync(process.env.FLOOR_MAC_FILE ?? '/dev/null', 'utf8').split('\n').filter(Boolean));
const SESSION_TIMEOUT = Number(process.env.FLOOR_SESSION_TIMEOUT ?? 14_400);
const BANDWIDTH_DOWN = Number(process.env.FLOOR_BANDWIDTH_DOWN ?? 10_000_000);
const DUPLICATE_MS = 5_000;
const MESSAGE_AUTHENTICATOR = 80, USER_NAME = 1;
const crypto = new RadiusCrypto();

/** RFC 5080 §2.2.2: the last reply per (source, identifier), given again to a resend with the same authenticator. */
interface Sent { authenticator: Buffer; reply: Buffer; at: number }
const sent = new Map<string, Sent>();
setInterval(() => {
  const old = Date.now() - DUPLICATE_MS;
  for (const [k, s] of sent) if (s.at < old) sent.delete(k);
}, 1_000).unref();

/** A resend of a request answered within the window gets its reply again; true when it did. */
function resent(socket: Socket, buf: Buffer, key: string, from: RemoteInfo): boolean {
  const s = sent.get(key);
  if (s === undefined || Date.now() - s.at > DUPLICATE_MS || s.authenticator.compare(buf, 4, 20) !== 0) return false;
  socket.send(s.reply, from.port, from.address);
  return true;
}

function remember(key: string, buf: Buffer, reply: Buffer): void {
  sent.set(key, { authenticator: Buffer.from(buf.subarray(4, 20)), reply, at: Date.now() });
}

// Access-Accept: header, Session-Timeout (6), WISPr-Bandwidth-Max-Down (VSA 14122/8: 12), Message-Authenticator (18).
const ACCEPT_LENGTH = HEADER_LENGTH + 6 + 12 + 18;

function accept(buf: Buffer): Buffer {
  const out = Buffer.allocUnsafe(ACCEPT_LENGTH);
  out[0] = 2; out[1] = buf[1]!; out.writeUInt16BE(ACCEPT_LENGTH, 2);
  buf.copy(out, 4, 4, 20); // the request's authenticator: both signatures cover it
  let at = HEADER_LENGTH;
  out[at] = 27; out[at + 1] = 6; out.writeUInt32BE(SESSION_TIMEOUT, at + 2); at += 6;
  out[at] = 26; out[at + 1] = 12; out.writeUInt32BE(14122, at + 2); out[at + 6] = 8; out[at + 7] = 6; out.writeUInt32BE(BANDWIDTH_DOWN, at + 8); at += 12;
  out[at] = MESSAGE_AUTHENTICATOR; out[at + 1] = 18; out.fill(0, at + 2, at + 18);
  crypto.signMessageAuthenticator(out, ACCEPT_LENGTH, at, SECRET);
  crypto.signAuthenticatorInPlace(out, ACCEPT_LENGTH, SECRET);
  return out;
}

function onAccess(socket: Socket, buf: Buffer, from: RemoteInfo): void {
  const len = checkFraming(buf);
  if (len < 0 || buf[0] !== 1) return;
  const key = `${from.address}:${from.port}:${buf[1]}`;
  if (resent(socket, buf, key, from)) return;
  const ma = findAttribute(buf, len, MESSAGE_AUTHENTICATOR);
  if (ma < 0 || !crypto.verifyMessageAuthenticator(buf, len, ma, SECRET, null)) return;
  const user = findAttribute(buf, len, USER_NAME);
  if (user < 0 || !MACS.has(buf.toString('utf8', user + 2, user + buf[user + 1]!))) return; // no reject: the bench sends only authorised MACs
  const reply = accept(buf);
  remember(key, buf, reply);
  socket.send(reply, from.port, from.address);
}

function onAccounting(socket: Socket, buf: Buffer, from: RemoteInfo): void {
  const len = checkFraming(buf);
  if (len < 0 || buf[0] !== 4) return;
  const key = `${from.address}:${from.port}:${buf[1]}`;
  if (resent(socket, buf, key, from)) return;
  if (!crypto.verifyRequestAuthenticator(buf, len, SECRET)) return;
  const reply = Buffer.allocUnsafe(HEADER_LENGTH);
  reply[0] = 5; reply[1] = buf[1]!; reply.writeUInt16BE(HEADER_LENGTH, 2);
  buf.copy(reply, 4, 4, 20);
  crypto.signAuthenticatorInPlace(reply, HEADER_LENGTH, SECRET);
  remember(key, buf, reply);
  socket.send(reply, from.port, from.address);
}

async function listen(handler: (s: Socket, b: Buffer, r: RemoteInfo) => void): Promise<Socket> {
  const socket = udpSocket('udp4');
  socket.on('message', (b, r) => handler(socket, b, r));
  await new Promise<void>((resolve, reject) => { socket.once('error', reject); socket.bind(0, HOST, () => resolve()); });
  return socket;
}

const auth = await listen(onAccess), acct = await listen(onAccounting);
process.stdout.write(JSON.stringify({ ready: true, radius: { auth: auth.address().port, acct: acct.address().port } }) + '\n');
process.once('SIGTERM', () => { auth.close(); acct.close(); });
