import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Code, RadiusServer } from '../../radius/index.js';
import { TestHandler, TestNas, accessRequest, accountingRequest, nasRecord, silentLogger } from './helpers.js';

/**
 * Access points behind one NAT share a source address (issue 24): the
 * RADIUS server hands the engine the packet's NAS-Identifier with the
 * address, the engine picks the client registered with it, and that
 * client's secret must verify the packet.
 */

const SILENCE_MS = 300;

describe('NASes behind one address, told apart by NAS-Identifier', () => {
  const ap1 = nasRecord({ id: 'nas_ap1', hotspotId: 'hs_lobby' });
  const ap2 = nasRecord({ id: 'nas_ap2', hotspotId: 'hs_pool' });
  let handler: TestHandler;
  let server: RadiusServer;
  let client: TestNas;
  let auth = 0;
  let acct = 0;

  beforeAll(async () => { client = await TestNas.open(); });
  afterAll(async () => { await client.close(); });
  beforeEach(async () => {
    handler = new TestHandler();
    handler.named.set('127.0.0.1/ap-lobby', ap1);
    handler.named.set('127.0.0.1/ap-pool', ap2);
    server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: silentLogger });
    ({ auth, acct } = await server.start());
  });
  afterEach(async () => {
    await server.stop();
    while (await client.next(0));
  });

  it("each access point's Access-Request reaches the engine as its own NAS, verified with its own secret", async () => {
    for (const [ap, ident] of [[ap1, 'ap-lobby'], [ap2, 'ap-pool']] as const) {
      const reply = await client.exchange(accessRequest({ secret: ap.secret, userName: 'guest', password: 'CODE', nasIdentifier: ident }), auth);
      expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
    }
    expect(handler.accessMsgs.map((m) => m.nas.id)).toEqual(['nas_ap1', 'nas_ap2']);
    expect(handler.identifiersRead).toEqual(['ap-lobby', 'ap-pool']);
  });

  it('accounting is matched the same way', async () => {
    const reply = await client.exchange(accountingRequest({ secret: ap2.secret, status: 1, nasIdentifier: 'ap-pool' }), acct);
    expect(reply?.[0]).toBe(Code.ACCOUNTING_RESPONSE);
    expect(handler.accountingMsgs.map((m) => m.nas.id)).toEqual(['nas_ap2']);
  });

  it("an identifier claimed with another access point's secret is dropped, not served as the other", async () => {
    expect(await client.exchange(accessRequest({ secret: ap1.secret, userName: 'g', password: 'p', nasIdentifier: 'ap-pool' }), auth, SILENCE_MS)).toBeNull();
    expect(server.stats().dropped.bad_message_authenticator).toBe(1);
    expect(handler.accessMsgs).toHaveLength(0);
  });

  it('an unnamed or unknown identifier is an unknown NAS, unless the address has a client without an identifier', async () => {
    expect(await client.exchange(accessRequest({ secret: ap1.secret, userName: 'g', password: 'p' }), auth, SILENCE_MS)).toBeNull();
    expect(await client.exchange(accessRequest({ secret: ap1.secret, userName: 'g', password: 'p', nasIdentifier: 'ap-roof' }), auth, SILENCE_MS)).toBeNull();
    expect(server.stats().dropped.unknown_nas).toBe(2);

    const plain = nasRecord({ id: 'nas_plain' });
    handler.nases.set('127.0.0.1', plain);
    const reply = await client.exchange(accessRequest({ secret: plain.secret, userName: 'g', password: 'p', nasIdentifier: 'ap-roof' }), auth);
    expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
    expect(handler.accessMsgs.map((m) => m.nas.id)).toEqual(['nas_plain']);
  });
});
