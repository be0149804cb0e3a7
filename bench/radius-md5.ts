import { createHash, createHmac, hash } from 'node:crypto';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Attr, Code, HEADER_LENGTH, PacketWriter, RadiusCrypto, checkFraming, findAttribute } from '../radius/index.js';

/**
 * Scenario: the MD5 work of one Access-Request and its Access-Accept, on a
 * worker thread as a RADIUS thread does it (RADIUS_THREADS > 0): check the
 * request's Message-Authenticator (HMAC-MD5 over the packet, RFC 3579 §3.2),
 * recover its User-Password (one MD5 block, RFC 2865 §5.2), sign the reply's
 * Message-Authenticator and its Response Authenticator (RFC 2865 §3).
 *   A: radius/md5.ts through RadiusCrypto (what the server uses);
 *   B: node:crypto, createHmac/createHash per digest, straight from the datagram
 *      (the Message-Authenticator's 16 zero octets as a piece of their own, no copy);
 *   C: node:crypto with the one-shot crypto.hash() where a digest is plain MD5.
 * Rounds alternate A, B, C so drift on a shared machine falls on each.
 *
 * Knobs: BENCH_MD5_PACKETS (200000 per round), BENCH_ROUNDS (3).
 * Prints one summary line: ns per request/reply pair for each, and B/A, C/A.
 *   node_modules/.bin/node dist/bench/radius-md5.js
 */

const PACKETS = Number(process.env.BENCH_MD5_PACKETS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECRET = 'bench-md5-secret-of-a-nas';
const secretBytes = Buffer.from(SECRET);
const ZEROS = Buffer.alloc(16);

function requestPacket(): Buffer {
  const rc = new RadiusCrypto();
  const w = new PacketWriter(rc).begin(Code.ACCESS_REQUEST, 7, Buffer.alloc(16, 0x5a));
  w.messageAuthenticator();
  w.string(Attr.USER_NAME, 'AA-BB-CC-DD-EE-01');
  w.userPassword('AA-BB-CC-DD-EE-01', SECRET);
  w.string(Attr.CALLING_STATION_ID, 'AA-BB-CC-DD-EE-01');
  w.string(Attr.CALLED_STATION_ID, '00-11-22-33-44-55:Guest');
  w.string(Attr.NAS_IDENTIFIER, 'bench-nas');
  return Buffer.from(w.finishAccessRequest(SECRET));
}

/** A reply of typical size: header, Session-Timeout, Idle-Timeout, Class, Message-Authenticator. */
function replyPacket(req: Buffer): Buffer {
  const r = Buffer.alloc(HEADER_LENGTH + 6 + 6 + 26 + 18);
  r[0] = Code.ACCESS_ACCEPT;
  r[1] = req[1]!;
  r.writeUInt16BE(r.length, 2);
  req.copy(r, 4, 4, 20);
  return r;
}

type Run = (req: Buffer, len: number, ma: number, pw: number, reply: Buffer) => number;

function viaMd5Ts(): Run {
  const rc = new RadiusCrypto();
  const out = Buffer.alloc(16);
  return (req, len, ma, pw, reply) => {
    let ok = rc.verifyMessageAuthenticator(req, len, ma, SECRET, null) ? 1 : 0;
    ok += rc.decryptUserPassword(req, pw, SECRET, req.subarray(4, 20))!.length;
    rc.signMessageAuthenticator(reply, reply.length, reply.length - 18, SECRET);
    rc.packetDigestInto(reply, reply.length, req.subarray(4, 20), SECRET, out);
    return ok + out[0]!;
  };
}

function viaNodeCrypto(oneShot: boolean): Run {
  return (req, len, ma, pw, reply) => {
    const mac = createHmac('md5', secretBytes).update(req.subarray(0, ma + 2)).update(ZEROS).update(req.subarray(ma + 18, len)).digest();
    let ok = mac.equals(req.subarray(ma + 2, ma + 18)) ? 1 : 0;
    const block = oneShot
      ? hash('md5', Buffer.concat([secretBytes, req.subarray(4, 20)]), 'buffer')
      : createHash('md5').update(secretBytes).update(req.subarray(4, 20)).digest();
    ok += block[0]! ^ req[pw + 2]!;
    createHmac('md5', secretBytes).update(reply).digest().copy(reply, reply.length - 16);
    const auth = oneShot
      ? hash('md5', Buffer.concat([reply, secretBytes]), 'buffer')
      : createHash('md5').update(reply).update(secretBytes).digest();
    return ok + auth[0]!;
  };
}

function measure(run: Run, req: Buffer, reply: Buffer): number {
  const len = checkFraming(req);
  const ma = findAttribute(req, len, Attr.MESSAGE_AUTHENTICATOR);
  const pw = findAttribute(req, len, Attr.USER_PASSWORD);
  let sink = 0;
  for (let i = 0; i < 5_000; i++) sink += run(req, len, ma, pw, reply); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < PACKETS; i++) sink += run(req, len, ma, pw, reply);
  const ns = Number(process.hrtime.bigint() - t0) / PACKETS;
  if (sink === -1) console.log(sink); // keeps the loop's work observable
  return ns;
}

if (isMainThread) {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: {} });
  worker.on('message', (m: { a: number; b: number; c: number }) => {
    process.stdout.write(`radius-md5 (on a worker thread, ns per Access-Request + Access-Accept): md5.ts ${m.a.toFixed(0)} | ` +
      `node:crypto ${m.b.toFixed(0)} (${(m.b / m.a).toFixed(2)}x) | node:crypto with hash() ${m.c.toFixed(0)} (${(m.c / m.a).toFixed(2)}x)\n`);
  });
  worker.on('error', (err) => { process.stderr.write(`radius-md5: ${err.message}\n`); process.exitCode = 1; });
} else {
  void workerData;
  const req = requestPacket();
  const reply = replyPacket(req);
  const a = viaMd5Ts(), b = viaNodeCrypto(false), c = viaNodeCrypto(true);
  // Both ways check the same packet: a wrong offset would make one of them fail, not look fast.
  const ma = findAttribute(req, req.length, Attr.MESSAGE_AUTHENTICATOR);
  const nodeMac = createHmac('md5', secretBytes).update(req.subarray(0, ma + 2)).update(ZEROS).update(req.subarray(ma + 18)).digest();
  if (!new RadiusCrypto().verifyMessageAuthenticator(req, req.length, ma, SECRET, null) || !nodeMac.equals(req.subarray(ma + 2, ma + 18))) {
    throw new Error('the request does not verify both ways');
  }
  const sums = { a: 0, b: 0, c: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    sums.a += measure(a, req, reply);
    sums.b += measure(b, req, reply);
    sums.c += measure(c, req, reply);
  }
  parentPort!.postMessage({ a: sums.a / ROUNDS, b: sums.b / ROUNDS, c: sums.c / ROUNDS });
}
