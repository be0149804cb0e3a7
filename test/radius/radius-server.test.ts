import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/poll.js';
import type { AccessDecision, NasRecord } from '../../engine/index.js';
import {
  AcctStatusType, Attr, Code, RadiusCrypto, RadiusServer, attributeValue, checkFraming,
  decodePacket, findAttribute, vendorAttributeValues,
} from '../../radius/index.js';
import {
  ACCEPT, TestHandler, TestNas, accessRequest, accountingRequest, deferred, nasRecord, radiusPackage, silentLogger, sleep,
} from './helpers.js';

const rc = new RadiusCrypto();

const radiusPkg = radiusPackage<{
  decode(args: { packet: Buffer; secret: string }): { code: string; attributes: Record<string, any> };
  verify_response(args: { request: Buffer; response: Buffer; secret: string }): boolean;
}>();

/** How long "no reply" is waited for: well above loopback round trips (~0.1 ms). */
const SILENCE_MS = 300;

describe('RadiusServer over UDP on 127.0.0.1', () => {
  let nas: NasRecord;
  let handler: TestHandler;
  let server: RadiusServer;
  let client: TestNas;
  let auth = 0;
  let acct = 0;

  beforeAll(async () => {
    client = await TestNas.open();
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(async () => {
    nas = nasRecord();
    handler = new TestHandler(nas);
    server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: silentLogger });
    ({ auth, acct } = await server.start());
  });
  afterEach(async () => {
    await server.stop();
    while (await client.next(0)); // nothing left over for the next test
  });

  const signedRequest = (extra: Partial<Parameters<typeof accessRequest>[0]> = {}) => accessRequest({
    secret: nas.secret, id: 42, userName: 'guest', password: 'V0UCH3R',
    callingStationId: 'aa-bb-cc-dd-ee-0f', calledStationId: '00-11-22-33-44-55:Hotel Guest',
    framedIp: '10.1.2.3', nasPortId: 'wlan0', ...extra,
  });

  describe('Access-Request', () => {
    it('hands the engine the decoded request and answers Access-Accept with Message-Authenticator first and every limit attribute', async () => {
      const req = signedRequest();
      const reply = await client.exchange(req, auth);
      expect(reply).not.toBeNull();
      expect(handler.accessMsgs).toEqual([{
        nas, mac: 'AA:BB:CC:DD:EE:0F', userName: 'guest', password: 'V0UCH3R', framedIp: '10.1.2.3',
        ssid: 'Hotel Guest', nasPortId: 'wlan0', calledStationId: '00-11-22-33-44-55:Hotel Guest',
      }]);

      const len = checkFraming(reply!);
      expect(reply![0]).toBe(Code.ACCESS_ACCEPT);
      expect(reply![1]).toBe(42);
      expect(reply![20]).toBe(Attr.MESSAGE_AUTHENTICATOR); // first attribute (CVE-2024-3596)
      expect(rc.verifyMessageAuthenticator(reply!, len, 20, nas.secret, req.subarray(4, 20))).toBe(true);
      expect(rc.verifyResponseAuthenticator(reply!, len, req.subarray(4, 20), nas.secret)).toBe(true);

      const p = decodePacket(reply!)!;
      const u32 = (b: Buffer | undefined) => b!.readUInt32BE(0);
      expect(u32(attributeValue(p, Attr.SESSION_TIMEOUT))).toBe(3600);
      expect(u32(attributeValue(p, Attr.IDLE_TIMEOUT))).toBe(600);
      expect(attributeValue(p, Attr.CLASS)!.toString()).toBe('ses_test0000000001');
      const vsa = (vendor: number, type: number) => vendorAttributeValues(p, vendor, type);
      expect(vsa(14122, 8).map((b) => b.readUInt32BE(0))).toEqual([10_000_000]); // WISPr down, bit/s
      expect(vsa(14122, 7).map((b) => b.readUInt32BE(0))).toEqual([2_000_000]); // WISPr up
      expect(vsa(14559, 5).map((b) => b.readUInt32BE(0))).toEqual([10_000]); // ChilliSpot down, kbit/s
      expect(vsa(14559, 4).map((b) => b.readUInt32BE(0))).toEqual([2_000]);
      expect(vsa(14988, 8).map((b) => b.toString())).toEqual(['2000k/10000k']); // Mikrotik-Rate-Limit up/down
      expect(vsa(14559, 3).map((b) => b.readUInt32BE(0))).toEqual([1234]); // quota low 32 bits
      expect(vsa(14559, 23).map((b) => b.readUInt32BE(0))).toEqual([5]); // ... and Gigawords
      expect(vsa(14988, 17).map((b) => b.readUInt32BE(0))).toEqual([1234]);
      expect(vsa(14988, 18).map((b) => b.readUInt32BE(0))).toEqual([5]);

      // An independent decoder with our dictionaries agrees, and accepts the authenticators.
      expect(radiusPkg.verify_response({ request: Buffer.from(req), response: Buffer.from(reply!), secret: nas.secret })).toBe(true);
      const other = radiusPkg.decode({ packet: Buffer.from(reply!), secret: nas.secret });
      expect(other.attributes['Vendor-Specific']).toMatchObject({
        'WISPr-Bandwidth-Max-Down': 10_000_000, 'ChilliSpot-Max-Total-Gigawords': 5, 'Mikrotik-Rate-Limit': '2000k/10000k',
      });
      expect(server.stats().accepts).toBe(1);
    });

    it('leaves out Idle-Timeout at 0, bandwidth at 0 and the quota when unlimited', async () => {
      handler.decide = async () => ({ ...ACCEPT, idleTimeout: 0, downKbps: 0, upKbps: 0, quotaBytes: null });
      const reply = await client.exchange(signedRequest(), auth);
      const p = decodePacket(reply!)!;
      expect(p.attributes.map((a) => a.type)).toEqual([Attr.MESSAGE_AUTHENTICATOR, Attr.SESSION_TIMEOUT, Attr.CLASS]);
    });

    it('sends a quota below 4 GiB without Gigawords, and never a 0 that a NAS would read as unlimited', async () => {
      handler.decide = async () => ({ ...ACCEPT, quotaBytes: 0, sessionTimeout: 0 });
      const p = decodePacket((await client.exchange(signedRequest(), auth))!)!;
      expect(attributeValue(p, Attr.SESSION_TIMEOUT)!.readUInt32BE(0)).toBe(1);
      expect(vendorAttributeValues(p, 14559, 3).map((b) => b.readUInt32BE(0))).toEqual([1]);
      expect(vendorAttributeValues(p, 14559, 23)).toEqual([]);
      expect(vendorAttributeValues(p, 14988, 18)).toEqual([]);
    });

    it('takes the MAC from User-Name when there is no Calling-Station-Id, and has no SSID without one', async () => {
      await client.exchange(accessRequest({ secret: nas.secret, userName: 'aabb.ccdd.eeff', password: 'x' }), auth);
      expect(handler.accessMsgs[0]).toMatchObject({ mac: 'AA:BB:CC:DD:EE:FF', userName: 'aabb.ccdd.eeff', ssid: undefined });
      await client.exchange(accessRequest({ secret: nas.secret, userName: 'not-a-mac', calledStationId: 'AABBCCDDEEFF' }), auth);
      expect(handler.accessMsgs[1]).toMatchObject({ mac: '', password: undefined, ssid: undefined });
    });

    it('answers Access-Reject with Reply-Message = reason, Message-Authenticator first', async () => {
      handler.decide = async () => ({ accept: false, reason: 'Voucher expired' });
      const req = signedRequest();
      const reply = (await client.exchange(req, auth))!;
      expect(reply[0]).toBe(Code.ACCESS_REJECT);
      expect(reply[20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
      expect(rc.verifyMessageAuthenticator(reply, reply.length, 20, nas.secret, req.subarray(4, 20))).toBe(true);
      expect(rc.verifyResponseAuthenticator(reply, reply.length, req.subarray(4, 20), nas.secret)).toBe(true);
      expect(attributeValue(decodePacket(reply)!, Attr.REPLY_MESSAGE)!.toString()).toBe('Voucher expired');
      expect(server.stats().rejects).toBe(1);
    });

    it('echoes Proxy-State attributes unmodified and in order (RFC 2865 §5.33), in Accept, Reject and Accounting-Response', async () => {
      const proxyStates = [Buffer.from('proxy-1'), Buffer.from([0, 1, 2, 255])];
      const stateValues = (b: Buffer) => decodePacket(b)!.attributes.filter((a) => a.type === Attr.PROXY_STATE).map((a) => a.value.toString('hex'));
      const want = proxyStates.map((p) => p.toString('hex'));
      const accept = (await client.exchange(signedRequest({ proxyStates }), auth))!;
      expect(accept[20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
      expect(stateValues(accept)).toEqual(want);
      handler.decide = async () => ({ accept: false, reason: 'no' });
      expect(stateValues((await client.exchange(signedRequest({ proxyStates, authenticator: randomBytes(16) }), auth))!)).toEqual(want);
      const resp = (await client.exchange(accountingRequest({ secret: nas.secret, proxyStates }), acct))!;
      expect(stateValues(resp)).toEqual(want);
    });

    it('drops a request without Message-Authenticator from a NAS that requires one, counts it, and never asks the engine', async () => {
      expect(await client.exchange(signedRequest({ messageAuthenticator: 'none' }), auth, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.missing_message_authenticator).toBe(1);
      expect(handler.accessMsgs).toHaveLength(0);
    });

    it('answers a request without Message-Authenticator when the NAS does not require one (and still signs the reply)', async () => {
      nas.requireMessageAuthenticator = false;
      const reply = await client.exchange(signedRequest({ messageAuthenticator: 'none' }), auth);
      expect(reply![0]).toBe(Code.ACCESS_ACCEPT);
      expect(reply![20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
    });

    it('drops a request with a wrong Message-Authenticator even when the NAS does not require one', async () => {
      nas.requireMessageAuthenticator = false;
      expect(await client.exchange(signedRequest({ messageAuthenticator: 'bad' }), auth, SILENCE_MS)).toBeNull();
      // Signed with another secret: just as wrong.
      expect(await client.exchange(accessRequest({ secret: 'not-the-secret', userName: 'x' }), auth, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.bad_message_authenticator).toBe(2);
      expect(handler.accessMsgs).toHaveLength(0);
    });

    it('drops packets from an address that is not a registered NAS, and counts them', async () => {
      const stranger = await TestNas.open('127.0.0.2');
      try {
        expect(await stranger.exchange(signedRequest(), auth, SILENCE_MS)).toBeNull();
        expect(await stranger.exchange(accountingRequest({ secret: nas.secret }), acct, SILENCE_MS)).toBeNull();
      } finally {
        await stranger.close();
      }
      expect(server.stats().dropped.unknown_nas).toBe(2);
      expect(handler.accessMsgs).toHaveLength(0);
      expect(handler.accountingMsgs).toHaveLength(0);
    });

    it('supports an asynchronous NAS lookup', async () => {
      handler.lookup = async (ip) => { await sleep(5); return handler.nases.get(ip) ?? null; };
      expect((await client.exchange(signedRequest(), auth))![0]).toBe(Code.ACCESS_ACCEPT);
    });

    it('drops codes the port does not serve', async () => {
      const challenge = accessRequest({ secret: nas.secret });
      challenge[0] = Code.ACCESS_CHALLENGE; // a reply's code, sent to us as a request
      expect(await client.exchange(challenge, auth, SILENCE_MS)).toBeNull();
      expect(await client.exchange(signedRequest(), acct, SILENCE_MS)).toBeNull();
      expect(await client.exchange(accountingRequest({ secret: nas.secret }), auth, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.unknown_code).toBe(3);
    });
  });

  describe('duplicates (RFC 5080 §2.2.2)', () => {
    it('answers a retransmission with the cached reply, octet for octet, without asking the engine again', async () => {
      let n = 0;
      handler.decide = async () => ({ ...ACCEPT, sessionId: `ses_${++n}` }); // a second decision would differ
      const req = signedRequest();
      const first = (await client.exchange(req, auth))!;
      const second = (await client.exchange(req, auth))!;
      expect(second.equals(first)).toBe(true);
      expect(handler.accessMsgs).toHaveLength(1);
      expect(server.stats().duplicatesAnswered).toBe(1);
      // Same Identifier, new authenticator: a new request, not a duplicate.
      const third = (await client.exchange(signedRequest({ authenticator: randomBytes(16) }), auth))!;
      expect(attributeValue(decodePacket(third)!, Attr.CLASS)!.toString()).toBe('ses_2');
    });

    it('drops a retransmission of a request still in flight, then answers it from the cache once decided', async () => {
      const gate = deferred<AccessDecision>();
      handler.decide = () => gate.promise;
      const req = signedRequest();
      await client.send(req, auth);
      await sleep(50);
      await client.send(req, auth);
      expect(await client.next(SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.duplicate_in_flight).toBe(1);
      gate.resolve(ACCEPT);
      const reply = (await client.next())!.msg;
      expect(await client.next(SILENCE_MS)).toBeNull(); // exactly one reply for the two copies
      expect(handler.accessMsgs).toHaveLength(1);
      expect((await client.exchange(req, auth))!.equals(reply)).toBe(true);
    });

    it('after an engine failure, sends nothing and handles the retransmission afresh', async () => {
      let calls = 0;
      handler.decide = async () => { if (++calls === 1) throw new Error('redis down'); return ACCEPT; };
      const req = signedRequest();
      expect(await client.exchange(req, auth, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.handler_error).toBe(1);
      expect((await client.exchange(req, auth))![0]).toBe(Code.ACCESS_ACCEPT);
      expect(calls).toBe(2);
    });

    it('survives an engine that throws synchronously or returns a decision it cannot encode', async () => {
      handler.authorize = () => { throw new Error('sync bug'); };
      expect(await client.exchange(signedRequest(), auth, SILENCE_MS)).toBeNull();
      handler.authorize = async () => ({ ...ACCEPT, sessionTimeout: Number.NaN });
      expect(await client.exchange(signedRequest(), auth, SILENCE_MS)).toBeNull();
      handler.nasByIp = () => { throw new Error('lookup bug'); };
      expect(await client.exchange(signedRequest(), auth, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.handler_error).toBe(3);
      expect(server.stats().inFlight).toBe(0);
    });

    it('answers a decision the engine gives as a plain value (a mirrored accept) like a promised one, and its retransmission from the cache', async () => {
      let n = 0;
      handler.authorize = () => ({ ...ACCEPT, sessionId: `ses_sync${++n}` });
      const req = signedRequest();
      const first = (await client.exchange(req, auth))!;
      expect(first[0]).toBe(Code.ACCESS_ACCEPT);
      expect(attributeValue(decodePacket(first)!, Attr.CLASS)!.toString()).toBe('ses_sync1');
      expect((await client.exchange(req, auth))!.equals(first)).toBe(true);
      expect(n).toBe(1);
      handler.authorize = () => ({ ...ACCEPT, sessionTimeout: Number.NaN });
      expect(await client.exchange(signedRequest({ authenticator: randomBytes(16) }), auth, SILENCE_MS)).toBeNull();
      expect(server.stats()).toMatchObject({ accepts: 1, duplicatesAnswered: 1, inFlight: 0, dropped: { handler_error: 1 } });
    });
  });

  describe('Accounting-Request', () => {
    it('combines octets with Gigawords, maps status and terminate cause, and answers after the record is stored', async () => {
      const stored = deferred<void>();
      handler.record = () => stored.promise;
      const req = accountingRequest({
        secret: nas.secret, id: 9, status: AcctStatusType.STOP, userName: 'guest',
        callingStationId: 'AA:BB:CC:DD:EE:0F', calledStationId: '00-11-22-33-44-55:Hotel Guest',
        acctSessionId: '5F3A-0001', inputOctets: 1000, inputGigawords: 1, outputOctets: 7, outputGigawords: 3,
        sessionTime: 1800, terminateCause: 4, delayTime: 2, nasIdentifier: 'ap-lobby-1',
      });
      await client.send(req, acct);
      // RFC 2866 §2: no Accounting-Response before the data is recorded.
      expect(await client.next(SILENCE_MS)).toBeNull();
      expect(handler.accountingMsgs).toEqual([{
        nas, status: 'stop', mac: 'AA:BB:CC:DD:EE:0F', userName: 'guest', acctSessionId: '5F3A-0001',
        framedIp: undefined, ssid: 'Hotel Guest',
        inputOctets: 3 * 2 ** 32 + 7, // downloaded by the guest = Acct-Output-* (counted at the NAS port)
        outputOctets: 1 * 2 ** 32 + 1000,
        sessionTime: 1800, endReason: 'idle_timeout', delayTime: 2, apName: 'ap-lobby-1',
        calledStationId: '00-11-22-33-44-55:Hotel Guest',
      }]);
      stored.resolve();
      const reply = (await client.next())!.msg;
      expect(reply[0]).toBe(Code.ACCOUNTING_RESPONSE);
      expect(reply[1]).toBe(9);
      expect(reply.length).toBe(20);
      expect(rc.verifyResponseAuthenticator(reply, 20, req.subarray(4, 20), nas.secret)).toBe(true);
    });

    it('drops Gigawords no NAS port reaches (a total over 64 TiB) as an invalid attribute, and never asks the engine', async () => {
      const ok = accountingRequest({ secret: nas.secret, id: 20, inputGigawords: 16_384, outputGigawords: 16_384, outputOctets: 0xffffffff });
      expect((await client.exchange(ok, acct))![0]).toBe(Code.ACCOUNTING_RESPONSE);
      expect(handler.accountingMsgs[0]!.inputOctets).toBe(16_384 * 2 ** 32 + 0xffffffff);
      for (const [id, spec] of [[21, { inputGigawords: 16_385 }], [22, { outputGigawords: 0xffffffff }]] as const) {
        expect(await client.exchange(accountingRequest({ secret: nas.secret, id, ...spec }), acct, SILENCE_MS)).toBeNull();
      }
      expect(server.stats().dropped.invalid_attribute).toBe(2);
      expect(handler.accountingMsgs).toHaveLength(1);
    });

    it('maps every status it records', async () => {
      const statuses = [[1, 'start'], [3, 'interim'], [7, 'on'], [8, 'off']] as const;
      for (const [i, [code]] of statuses.entries()) {
        expect(await client.exchange(accountingRequest({ secret: nas.secret, id: i, status: code }), acct)).not.toBeNull();
      }
      expect(handler.accountingMsgs.map((m) => m.status)).toEqual(statuses.map(([, s]) => s));
      expect(await client.exchange(accountingRequest({ secret: nas.secret, status: 9 /* Tunnel-Start */ }), acct, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.unsupported_status).toBe(1);
    });

    it('sends no Accounting-Response when the engine fails to record, and answers the retransmission once it succeeds', async () => {
      let fail = true;
      handler.record = async () => { if (fail) throw new Error('postgres down'); };
      const req = accountingRequest({ secret: nas.secret, acctSessionId: 'x' });
      expect(await client.exchange(req, acct, SILENCE_MS)).toBeNull();
      expect(server.stats().accountingResponses).toBe(0);
      fail = false;
      expect((await client.exchange(req, acct))![0]).toBe(Code.ACCOUNTING_RESPONSE);
      expect(handler.accountingMsgs).toHaveLength(2);
    });

    it('drops a request whose Request Authenticator is wrong (RFC 2866 §3)', async () => {
      expect(await client.exchange(accountingRequest({ secret: 'wrong-secret' }), acct, SILENCE_MS)).toBeNull();
      const tampered = accountingRequest({ secret: nas.secret, inputOctets: 5 });
      tampered[tampered.length - 1]! ^= 0x10; // Acct-Delay-Time changed after signing
      expect(await client.exchange(tampered, acct, SILENCE_MS)).toBeNull();
      expect(server.stats().dropped.bad_authenticator).toBe(2);
      expect(handler.accountingMsgs).toHaveLength(0);
    });

    it('checks a Message-Authenticator in an Accounting-Request too', async () => {
      const ok = accountingRequest({ secret: nas.secret, messageAuthenticator: true });
      expect((await client.exchange(ok, acct))![0]).toBe(Code.ACCOUNTING_RESPONSE);
      const len = ok.length;
      expect(rc.verifyMessageAuthenticator(ok, len, findAttribute(ok, len, Attr.MESSAGE_AUTHENTICATOR), nas.secret, Buffer.alloc(16))).toBe(true);
    });

    it('answers an accounting retransmission octet for octet', async () => {
      const req = accountingRequest({ secret: nas.secret, id: 77 });
      const a = (await client.exchange(req, acct))!;
      const b = (await client.exchange(req, acct))!;
      expect(b.equals(a)).toBe(true);
      expect(handler.accountingMsgs).toHaveLength(1);
    });
  });

  describe('malformed input', () => {
    it('survives thousands of fuzzed datagrams on both ports and still answers a valid request', async () => {
      nas.requireMessageAuthenticator = false; // let mutated requests reach the attribute parser
      const bases = [
        signedRequest({ messageAuthenticator: 'none' }),
        signedRequest(),
        accountingRequest({ secret: nas.secret, inputOctets: 1, inputGigawords: 2 }),
      ];
      let sent = 0;
      for (let i = 0; i < 4000; i++) {
        let b: Buffer;
        const kind = i % 4;
        if (kind === 0) {
          b = randomBytes(Math.floor(Math.random() * 120));
        } else {
          b = Buffer.from(bases[i % bases.length]!);
          if (kind === 1) b.writeUInt16BE(Math.floor(Math.random() * 5000), 2); // bad Length field
          if (kind === 2) b = b.subarray(0, 20 + Math.floor(Math.random() * (b.length - 20))); // truncated attributes
          if (kind === 3) for (let k = 0; k < 3; k++) b[20 + Math.floor(Math.random() * (b.length - 20))] = Math.floor(Math.random() * 256);
        }
        await client.send(b, i % 2 ? auth : acct);
        sent++;
        if (i % 200 === 0) await sleep(1); // let the server drain its socket buffer
      }
      // A fresh socket, so replies to mutated-but-valid packets do not get in the way.
      const probe = await TestNas.open();
      try {
        const reply = await probe.exchange(signedRequest({ authenticator: randomBytes(16) }), auth, 2000);
        expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
        const acctReply = await probe.exchange(accountingRequest({ secret: nas.secret, acctSessionId: 'after-fuzz' }), acct, 2000);
        expect(acctReply?.[0]).toBe(Code.ACCOUNTING_RESPONSE);
      } finally {
        await probe.close();
      }
      const s = server.stats();
      expect(s.received.auth + s.received.acct).toBeGreaterThanOrEqual(sent * 0.95); // loopback may lose a few
      expect(s.dropped.malformed).toBeGreaterThan(1000);
      expect(s.inFlight).toBe(0);
    });
  });
});

describe('RadiusServer options', () => {
  it('fails at construction with a clear message', () => {
    const handler = new TestHandler();
    const base = { handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: silentLogger };
    expect(() => new RadiusServer({ ...base, host: 'localhost' })).toThrow(/host must be an IP address/);
    expect(() => new RadiusServer({ ...base, authPort: 70000 })).toThrow(/authPort must be an integer/);
    expect(() => new RadiusServer({ ...base, authPort: 1812, acctPort: 1812 })).toThrow(/must differ/);
    expect(() => new RadiusServer({ ...base, handler: {} as TestHandler })).toThrow(/handler must implement/);
    expect(() => new RadiusServer({ ...base, maxInFlight: 0 })).toThrow(expect.objectContaining({ code: 'radius_bad_options' }));
  });

  it('drops requests beyond maxInFlight and counts them as overloaded', async () => {
    const nas = nasRecord();
    const handler = new TestHandler(nas);
    const gate = deferred<AccessDecision>();
    handler.decide = () => gate.promise;
    const server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: silentLogger, maxInFlight: 2 });
    const { auth } = await server.start();
    const client = await TestNas.open();
    try {
      for (let i = 0; i < 3; i++) await client.send(accessRequest({ secret: nas.secret, id: i, userName: 'u' }), auth);
      // Received and counted in this process's own loop: waited for, not slept on (a timer can come due before a read).
      await until(() => server.stats().dropped.overloaded === 1, { what: 'the third request dropped', seen: () => server.stats().dropped });
      expect(server.stats().inFlight).toBe(2);
      gate.resolve(ACCEPT);
      expect((await client.next())?.msg[0]).toBe(Code.ACCESS_ACCEPT);
      expect((await client.next())?.msg[0]).toBe(Code.ACCESS_ACCEPT);
      expect(server.stats().inFlight).toBe(0);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
