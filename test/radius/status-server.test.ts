import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NasRecord } from '../../engine/index.js';
import { Attr, Code, PacketWriter, RadiusCrypto, RadiusServer, checkFraming, decodePacket } from '../../radius/index.js';
import { TestHandler, TestNas, nasRecord, silentLogger } from './helpers.js';

/**
 * Status-Server (RFC 5997): a NAS or a monitor asks whether the server is
 * alive. Answered on the auth port with Access-Accept and on the accounting
 * port with Accounting-Response, each signed with a Message-Authenticator,
 * for a known NAS with its secret only; never handed to the engine.
 */

const rc = new RadiusCrypto();
const writer = new PacketWriter(rc);
/** How long "no reply" is waited for: far above a loopback round trip. */
const SILENCE_MS = 300;

/** A Status-Server signed with `secret` (or with no Message-Authenticator at all). */
function statusServer(secret: string, opts: { id?: number; ma?: boolean } = {}): Buffer {
  const w = writer.begin(Code.STATUS_SERVER, opts.id ?? 7, randomBytes(16));
  if (opts.ma !== false) w.messageAuthenticator();
  return w.finishAccessRequest(secret);
}

// RFC 5997 §6.1: the example Status-Server, secret "xyzzy5461", from 127.0.0.1.
const RFC5997_EXAMPLE = Buffer.from(
  '0cda00268a54f4686fb394c52866e302185d062350125a665e2e1e8411f3e243822097c84fa3', 'hex');

describe('Status-Server (RFC 5997) over UDP on 127.0.0.1', () => {
  let nas: NasRecord;
  let handler: TestHandler;
  let server: RadiusServer;
  let client: TestNas;
  let auth = 0;
  let acct = 0;

  beforeAll(async () => { client = await TestNas.open(); });
  afterAll(async () => { await client.close(); });
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

  /** The reply is signed as a response to `req`: its Message-Authenticator first, then the Response Authenticator. */
  function expectSignedReply(reply: Buffer | null, req: Buffer, code: number, secret: string): void {
    expect(reply).not.toBeNull();
    const len = checkFraming(reply!);
    expect(reply![0]).toBe(code);
    expect(reply![1]).toBe(req[1]);
    const p = decodePacket(reply!)!;
    expect(p.attributes.map((a) => a.type)).toEqual([Attr.MESSAGE_AUTHENTICATOR]);
    expect(rc.verifyMessageAuthenticator(reply!, len, 20, secret, req.subarray(4, 20))).toBe(true);
    expect(rc.verifyResponseAuthenticator(reply!, len, req.subarray(4, 20), secret)).toBe(true);
  }

  it('answers on the auth port with a signed Access-Accept, without asking the engine', async () => {
    const req = statusServer(nas.secret, { id: 201 });
    expectSignedReply(await client.exchange(req, auth), req, Code.ACCESS_ACCEPT, nas.secret);
    expect(handler.accessMsgs).toHaveLength(0);
    expect(server.stats().statusAnswered).toBe(1);
  });

  it('answers on the accounting port with a signed Accounting-Response', async () => {
    const req = statusServer(nas.secret, { id: 202 });
    expectSignedReply(await client.exchange(req, acct), req, Code.ACCOUNTING_RESPONSE, nas.secret);
    expect(handler.accountingMsgs).toHaveLength(0);
  });

  it('answers the RFC 5997 §6.1 example packet byte for byte as the RFC signs it', async () => {
    nas = nasRecord({ secret: 'xyzzy5461' });
    handler.nases.set('127.0.0.1', nas);
    expectSignedReply(await client.exchange(RFC5997_EXAMPLE, auth), RFC5997_EXAMPLE, Code.ACCESS_ACCEPT, 'xyzzy5461');
  });

  it('drops one without a Message-Authenticator, even from a NAS that need not sign its Access-Requests', async () => {
    handler.nases.set('127.0.0.1', { ...nas, requireMessageAuthenticator: false });
    expect(await client.exchange(statusServer(nas.secret, { ma: false }), auth, SILENCE_MS)).toBeNull();
    expect(server.stats().dropped.missing_message_authenticator).toBe(1);
  });

  it('drops one signed with another secret, and one from an address that is no NAS', async () => {
    expect(await client.exchange(statusServer('not-the-secret'), auth, SILENCE_MS)).toBeNull();
    expect(server.stats().dropped.bad_message_authenticator).toBe(1);
    handler.nases.clear();
    expect(await client.exchange(statusServer(nas.secret), auth, SILENCE_MS)).toBeNull();
    expect(server.stats().dropped.unknown_nas).toBe(1);
    expect(server.stats().statusAnswered).toBe(0);
  });

  it('answers each one afresh: a repeated packet is answered again, not from the duplicate cache', async () => {
    const req = statusServer(nas.secret);
    expect(await client.exchange(req, auth)).not.toBeNull();
    expect(await client.exchange(req, auth)).not.toBeNull();
    expect(server.stats()).toMatchObject({ statusAnswered: 2, duplicatesAnswered: 0 });
  });

  it("is answered to FreeRADIUS's radclient (`radclient ... status`) on both ports", async () => {
    for (const [port, answer] of [[auth, 'Access-Accept'], [acct, 'Accounting-Response']] as const) {
      const r = await radclient(['-x', '-r', '5', '-t', '2', `127.0.0.1:${port}`, 'status', nas.secret], 'Message-Authenticator = 0x00\n');
      expect(r.stdout).toContain(`Received ${answer}`);
      expect(r.code).toBe(0);
    }
  });
});

/** Runs Debian's radclient (freeradius-utils; the global setup installs it) without blocking the server in this process. */
function radclient(args: string[], input: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('radclient', args, { timeout: 20_000 }, (err, stdout) => {
      if (err && typeof err.code !== 'number') reject(new Error(`radclient did not run (Debian: freeradius-utils): ${err.message}`));
      else resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout });
    });
    child.stdin!.end(input);
  });
}
