import { createHash, randomInt } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { request } from 'node:http';
import { createServer, type Socket } from 'node:net';

/**
 * A stand-in for the service that answers the stadium storm's requests as
 * cheaply as it can, with the shapes and sizes the service answers with: the
 * portal page (STUB_PAGE_BYTES of body: the size of the service's gzip answer to
 * a phone), a voucher or SMS-code sign-in
 * (`{"status":"authorized",...}`; an SMS request sends the code to the bench's
 * fake carrier first, as the service does), Access-Accept and
 * Accounting-Response with a correct Response Authenticator (RFC 2865 §3,
 * RFC 2866 §3). Nothing is stored or checked: it exists so the storm's own
 * generator can be measured and profiled alone (`stadium-storm --stub`), its
 * CPU per guest read without the service's beside it.
 *
 * Env: STUB_SECRET (the NAS secret), STUB_PAGE_BYTES (default 8,600),
 * STUB_CARRIER_URL and STUB_CARRIER_AUTH (the fake carrier, for SMS codes).
 * Prints `{"ready":true,"ports":{"main":p},"radius":{"auth":a,"acct":b}}`.
 */

const HOST = '127.0.0.1';
const SECRET = Buffer.from(process.env.STUB_SECRET ?? 'storm-nas-secret');
const PAGE_BYTES = Number(process.env.STUB_PAGE_BYTES ?? 8_600);
const CARRIER = process.env.STUB_CARRIER_URL;
const CARRIER_AUTH = process.env.STUB_CARRIER_AUTH ?? '';

const answer = (status: string, type: string, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\n\r\n`, 'latin1'), body]);
const PAGE = answer('200 OK', 'text/html; charset=utf-8', Buffer.alloc(PAGE_BYTES, 'x'));
const json = (o: unknown): Buffer => answer('200 OK', 'application/json', Buffer.from(JSON.stringify(o)));
const AUTHORIZED = json({ status: 'authorized', session_id: 'ses_stub0000000000000000', expires_at: '2026-11-29T01:00:00.000Z', uses_left: null, redirect_url: null });
const SENT = json({ status: 'sent', channel: 'sms', expires_in: 300, request_id: 'otp_stub00000000000000000000' });
const NOT_FOUND = answer('404 Not Found', 'application/json', Buffer.from('{"error":"not_found","message":"stub"}'));

/** Sends the SMS code to the fake carrier (Netgsm's shape), then answers the portal. */
function sms(body: string, socket: Socket): void {
  const phone = /"phone":"\+?(\d+)"/.exec(body)?.[1] ?? '';
  const code = String(randomInt(100_000, 1_000_000));
  if (!CARRIER) { socket.write(SENT); return; }
  const payload = JSON.stringify({ msgheader: 'STADIUM', msg: `Your code is ${code}`, no: phone });
  const req = request(`${CARRIER}/sms/rest/v2/otp`, { method: 'POST', headers: { authorization: CARRIER_AUTH, 'content-type': 'application/json' } }, (res) => {
    res.resume();
    res.on('end', () => socket.write(SENT));
  });
  req.on('error', () => socket.destroy());
  req.end(payload);
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  let buf = '';
  socket.on('data', (chunk: Buffer) => {
    buf += chunk.toString('latin1');
    for (;;) {
      const headEnd = buf.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const lengthAt = buf.indexOf('content-length: ');
      const length = lengthAt >= 0 && lengthAt < headEnd ? parseInt(buf.slice(lengthAt + 16, buf.indexOf('\r\n', lengthAt)), 10) : 0;
      if (buf.length < headEnd + 4 + length) return;
      const line = buf.slice(0, buf.indexOf(' HTTP/1.1'));
      const body = buf.slice(headEnd + 4, headEnd + 4 + length);
      buf = buf.slice(headEnd + 4 + length);
      if (line.startsWith('GET /portal?')) socket.write(PAGE);
      else if (line === 'POST /api/v1/hotspot-portal/voucher/verify' || line === 'POST /api/v1/hotspot-portal/sms/verify') socket.write(AUTHORIZED);
      else if (line === 'POST /api/v1/hotspot-portal/sms/request') sms(body, socket);
      else socket.write(NOT_FOUND);
    }
  });
});

/** Answers every request with its code's answer (Access-Accept, Accounting-Response) and a right Response Authenticator. */
function radius(reply: number): Promise<number> {
  const s: UdpSocket = createSocket('udp4');
  s.on('message', (msg: Buffer, peer: RemoteInfo) => {
    if (msg.length < 20) return;
    const out = Buffer.allocUnsafe(20);
    out[0] = reply; out[1] = msg[1]!; out.writeUInt16BE(20, 2);
    // Response Authenticator = MD5(Code + Identifier + Length + Request Authenticator + attributes + secret).
    createHash('md5').update(out.subarray(0, 4)).update(msg.subarray(4, 20)).update(SECRET).digest().copy(out, 4);
    s.send(out, peer.port, peer.address);
  });
  return new Promise((resolve) => s.bind(0, HOST, () => {
    try { s.setRecvBufferSize(8 * 1024 * 1024); s.setSendBufferSize(8 * 1024 * 1024); } catch { /* kernel cap */ }
    resolve(s.address().port);
  }));
}

server.listen(0, HOST, async () => {
  const auth = await radius(2);
  const acct = await radius(5);
  process.stdout.write(JSON.stringify({ ready: true, ports: { main: (server.address() as { port: number }).port }, radius: { auth, acct } }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
