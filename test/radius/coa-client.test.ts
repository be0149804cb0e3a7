import { createHash, createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/poll.js';
import type { NasRecord, NasSessionRef } from '../../engine/index.js';
import {
  Attr, Code, CoaClient, ErrorCause, PacketWriter, attributeValue, decodePacket,
} from '../../radius/index.js';
import { TestNas, nasRecord, silentLogger } from './helpers.js';

/** A NAS's reply to a CoA/Disconnect request, signed as RFC 5176 §2.3 says. */
function reply(request: Buffer, code: number, secret: string, errorCause?: number): Buffer {
  const w = new PacketWriter().begin(code, request[1]!).messageAuthenticator();
  if (errorCause !== undefined) w.uint32(Attr.ERROR_CAUSE, errorCause);
  return w.finishReply(request.subarray(4, 20), secret);
}

describe('CoaClient (RFC 5176) against a NAS listener on 127.0.0.1', () => {
  let listener: TestNas;
  let nas: NasRecord;
  let client: CoaClient;
  let ref: NasSessionRef;

  beforeEach(async () => {
    listener = await TestNas.open();
    nas = nasRecord({ coaPort: listener.port });
    ref = { nas, userName: 'guest-42', mac: 'AA:BB:CC:DD:EE:0F', acctSessionId: '5F3A-0001', framedIp: '10.1.2.3' };
    client = new CoaClient({ logger: silentLogger, retransmitDelaysMs: [100, 200, 400], timeoutMs: 1500 });
  });
  afterEach(async () => {
    await client.close();
    await listener.close();
  });

  it('sends a signed Disconnect-Request identifying the session, and resolves ack on Disconnect-ACK', async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = client.disconnect(ref);
    const got = (await listener.next())!;
    const req = got.msg;
    expect(req[0]).toBe(Code.DISCONNECT_REQUEST);

    // Request Authenticator = MD5(Code+ID+Length+16 zeros+Attributes+Secret), computed independently.
    const zeroed = Buffer.from(req);
    zeroed.fill(0, 4, 20);
    expect(createHash('md5').update(zeroed).update(nas.secret).digest().equals(req.subarray(4, 20))).toBe(true);
    // Message-Authenticator first, over the packet with a zero authenticator (RFC 5176 §3.4).
    expect(req[20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
    const forMac = Buffer.from(zeroed);
    forMac.fill(0, 22, 38);
    expect(createHmac('md5', nas.secret).update(forMac).digest().equals(req.subarray(22, 38))).toBe(true);

    const p = decodePacket(req)!;
    expect(attributeValue(p, Attr.USER_NAME)!.toString()).toBe('guest-42');
    expect(attributeValue(p, Attr.CALLING_STATION_ID)!.toString()).toBe('AA-BB-CC-DD-EE-0F'); // RFC 3580 §3.21 form
    expect(attributeValue(p, Attr.ACCT_SESSION_ID)!.toString()).toBe('5F3A-0001');
    expect([...attributeValue(p, Attr.FRAMED_IP_ADDRESS)!]).toEqual([10, 1, 2, 3]);
    const ts = attributeValue(p, Attr.EVENT_TIMESTAMP)!.readUInt32BE(0);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(before + 2);
    expect(attributeValue(p, Attr.SESSION_TIMEOUT)).toBeUndefined();

    await listener.send(reply(req, Code.DISCONNECT_ACK, nas.secret), got.rinfo.port);
    expect(await result).toEqual({ outcome: 'ack' });
  });

  it('sends CoA-Request with Session-Timeout and reports a NAK with Error-Cause 503 (Session Context Not Found)', async () => {
    const result = client.changeAuthorization(ref, { sessionTimeout: 900 });
    const got = (await listener.next())!;
    expect(got.msg[0]).toBe(Code.COA_REQUEST);
    expect(attributeValue(decodePacket(got.msg)!, Attr.SESSION_TIMEOUT)!.readUInt32BE(0)).toBe(900);
    await listener.send(reply(got.msg, Code.COA_NAK, nas.secret, ErrorCause.SESSION_CONTEXT_NOT_FOUND), got.rinfo.port);
    expect(await result).toEqual({ outcome: 'nak', errorCause: 503 });
  });

  it('reports a NAK without Error-Cause as errorCause null', async () => {
    const result = client.disconnect({ nas, userName: 'u', mac: '' });
    const got = (await listener.next())!;
    expect(attributeValue(decodePacket(got.msg)!, Attr.CALLING_STATION_ID)).toBeUndefined();
    await listener.send(reply(got.msg, Code.DISCONNECT_NAK, nas.secret), got.rinfo.port);
    expect(await result).toEqual({ outcome: 'nak', errorCause: null });
  });

  it('retransmits identical octets on schedule, then gives up with timeout', async () => {
    const started = Date.now();
    const result = client.disconnect(ref);
    const sends: { msg: Buffer; at: number }[] = [];
    for (;;) {
      const got = await listener.next(1000);
      if (!got) break;
      sends.push({ msg: got.msg, at: Date.now() - started });
    }
    expect(await result).toEqual({ outcome: 'timeout' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1450);
    expect(elapsed).toBeLessThan(2600);
    // First send plus one per delay: 0, 100, 300, 700 ms; same Identifier and authenticator every time.
    expect(sends).toHaveLength(4);
    for (const s of sends) expect(s.msg.equals(sends[0]!.msg)).toBe(true);
    expect(sends[1]!.at).toBeGreaterThanOrEqual(90);
    expect(sends[3]!.at).toBeGreaterThanOrEqual(690);
    expect(client.stats()).toMatchObject({ sent: 1, retransmitted: 3, timeout: 1 });
  });

  it('drops replies with a bad authenticator, the wrong code or from the wrong port, and keeps waiting', async () => {
    const result = client.disconnect(ref);
    const got = (await listener.next())!;
    const port = got.rinfo.port;
    await listener.send(reply(got.msg, Code.DISCONNECT_ACK, 'wrong-secret'), port);
    await listener.send(reply(got.msg, Code.COA_ACK, nas.secret), port); // ACK for another kind of request
    const forged = reply(got.msg, Code.DISCONNECT_ACK, nas.secret);
    forged[forged.length - 1]! ^= 1;
    await listener.send(forged, port);
    const stranger = await TestNas.open();
    await stranger.send(reply(got.msg, Code.DISCONNECT_ACK, nas.secret), port); // right octets, wrong source
    await stranger.close();
    await until(() => client.stats().droppedResponses >= 4, { what: 'the four bad replies dropped', seen: () => client.stats().droppedResponses });
    expect(client.stats().droppedResponses).toBe(4);
    await listener.send(reply(got.msg, Code.DISCONNECT_NAK, nas.secret, ErrorCause.SESSION_CONTEXT_NOT_FOUND), port);
    expect(await result).toEqual({ outcome: 'nak', errorCause: 503 });
  });

  it('keeps more than 256 requests to one NAS apart by queueing for Identifiers', async () => {
    client = new CoaClient({ logger: silentLogger, retransmitDelaysMs: [500], timeoutMs: 5000 });
    const results = Array.from({ length: 300 }, (_, i) => client.disconnect({ ...ref, acctSessionId: `s-${i}` }));
    const answered = new Set<string>();
    while (answered.size < 300) {
      const got = await listener.next(2000);
      if (!got) break;
      const sid = attributeValue(decodePacket(got.msg)!, Attr.ACCT_SESSION_ID)!.toString();
      answered.add(sid);
      await listener.send(reply(got.msg, Code.DISCONNECT_ACK, nas.secret), got.rinfo.port);
    }
    expect(answered.size).toBe(300);
    expect((await Promise.all(results)).every((r) => r.outcome === 'ack')).toBe(true);
  });

  it('ends outstanding requests as timeouts on close', async () => {
    const result = client.disconnect(ref);
    await listener.next();
    await client.close();
    expect(await result).toEqual({ outcome: 'timeout' });
    expect(await client.disconnect(ref)).toEqual({ outcome: 'timeout' });
  });

  it('refuses a Session-Timeout below 1 (a NAS may read 0 as unlimited)', async () => {
    await expect(client.changeAuthorization(ref, { sessionTimeout: 0 })).rejects.toMatchObject({ code: 'radius_bad_value' });
    expect(await listener.next(100)).toBeNull();
  });

  it('refuses bad options at construction', () => {
    expect(() => new CoaClient({ logger: silentLogger, retransmitDelaysMs: [0] })).toThrow(expect.objectContaining({ code: 'radius_bad_options' }));
    expect(() => new CoaClient({ logger: silentLogger, timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => new CoaClient({ logger: silentLogger, bindHost: 'nas.local' })).toThrow(/bindHost/);
  });
});
