import { randomInt } from 'node:crypto';
import { describe, expect } from 'vitest';
import { Attr, Code, attributeValue, decodePacket } from '../../radius/index.js';
import { accessRequest } from '../radius/helpers.js';
import { call, dashed, serviceTest } from '../support/fixture.js';
import { addLoopbackNas } from '../support/loopback-nas.js';

const test = serviceTest();

/**
 * Match-day vouchers over RADIUS (a code sent as User-Name, PAP): the same
 * rule as the portal, since both go through use-voucher-18.lua. Before the
 * window an Access-Reject saying so, and no use counted.
 */
describe('RADIUS: a voucher before its match-day window', () => {
  test('Access-Reject "Voucher not valid yet", nothing spent; an open voucher beside it is accepted', async ({ svc, tenant: t }) => {
    const nas = await addLoopbackNas(svc.base, t);
    try {
      const later = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'RAD-LATER', valid_from: new Date(Date.now() + 86_400_000).toISOString() } });
      await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'RAD-NOW', valid_until: new Date(Date.now() + 86_400_000).toISOString() } });
      const ask = async (code: string, mac: string): Promise<ReturnType<typeof decodePacket>> => {
        const reply = await nas.radius.exchange(accessRequest({
          secret: nas.secret, id: randomInt(0, 256), userName: code, password: code, callingStationId: dashed(mac), calledStationId: '00-11-22-33-44-55:Guest',
        }), svc.service.radiusPorts.auth, 3000);
        expect(reply, 'an answer').not.toBeNull();
        return decodePacket(reply!);
      };
      const refused = await ask('RAD-LATER', '02:00:5e:10:00:01');
      expect(refused!.code).toBe(Code.ACCESS_REJECT);
      expect(attributeValue(refused!, Attr.REPLY_MESSAGE)?.toString()).toBe('Voucher not valid yet');
      expect((await call(svc.base, 'GET', `/v1/vouchers/${later.body.id}`, { auth: t.apiKey })).body.current_uses).toBe(0);
      expect((await ask('RAD-NOW', '02:00:5e:10:00:02'))!.code).toBe(Code.ACCESS_ACCEPT);
    } finally {
      await nas.radius.close();
    }
  });
});
