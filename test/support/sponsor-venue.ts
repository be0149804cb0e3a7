import { randomInt } from 'node:crypto';
import type { RedisClient as Redis } from '../../engine/redis/redis-client.js';
import { expect } from 'vitest';
import { Code, RadiusCrypto } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { call, dashed, keys, newTenant, type Running, type Tenant } from './fixture.js';
import { addLoopbackNas } from './loopback-nas.js';
import type { SmtpListener } from './smtp-listener.js';

/**
 * A venue offering sponsor approval, for the sponsor tests: a tenant whose
 * sponsors are the addresses of one domain (and one address besides), its
 * e-mail through a real SMTP listener on loopback, and a test NAS.
 */
export const SPONSOR_DOMAIN = 'host.example';
export const LISTED_SPONSOR = 'reception@partner.example';

export interface Nas { radius: TestNas; secret: string }
export interface Venue { t: Tenant; nas: Nas }

export async function sponsorVenue(svc: Running, smtp: SmtpListener, nases: TestNas[], sponsor: Record<string, unknown> = {}, portal: Record<string, unknown> = {}): Promise<Venue> {
  const t = await newTenant(svc.service, 'Plaza Ofis');
  const own = t.tenantId.toUpperCase();
  process.env[`${own}_SMTP`] = smtp.url;
  const put = async (path: string, body: unknown) => {
    const r = await call(svc.base, 'PUT', path, { auth: t.apiKey, body });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  };
  await put(`/v1/hotspots/${t.hotspotId}`, { portal: { display_name: 'Plaza Ofis Lobi', ...portal } });
  await put('/v1/settings/sign-in', {
    methods: ['voucher'], email: { smtp_url_ref: `env://${own}_SMTP`, from: 'wifi@plaza.example' },
    sponsor: { enabled: true, allowed_domains: [SPONSOR_DOMAIN], allowed_emails: [LISTED_SPONSOR], durations_minutes: [60, 240, 480], ...sponsor },
  });
  return { t, nas: await registerNas(svc, t, nases) };
}

async function registerNas(svc: Running, t: Tenant, nases: TestNas[]): Promise<Nas> {
  const nas = await addLoopbackNas(svc.base, t);
  nases.push(nas.radius);
  return nas;
}

const rc = new RadiusCrypto();

/** The NAS asks for the device by MAC (Calling-Station-Id), as after a captive sign-in; returns the reply's code. */
export async function radiusAnswerFor(svc: Running, nas: Nas, mac: string): Promise<number> {
  const req = accessRequest({ secret: nas.secret, id: randomInt(0, 256), callingStationId: dashed(mac) });
  await nas.radius.send(req, svc.service.radiusPorts.auth);
  const endsAt = Date.now() + 5000;
  for (;;) {
    const got = await nas.radius.next(Math.max(1, endsAt - Date.now()));
    if (!got) throw new Error(`no RADIUS reply for ${mac}`);
    if (got.msg[1] === req[1] && rc.verifyResponseAuthenticator(got.msg, got.msg.length, req.subarray(4, 20), nas.secret)) return got.msg[0]!;
  }
}
export { Code };

/** The approve and reject links of the last sponsor e-mail to `to`. */
export function linksIn(smtp: SmtpListener, to: string): { approve: string; reject: string } {
  const m = [...smtp.messages].reverse().find((x) => x.to.includes(to));
  const text = m?.text.replace(/=\r?\n/g, '') ?? '';
  const approve = /(https?:\/\/\S+\?action=approve)/.exec(text)?.[1];
  const reject = /(https?:\/\/\S+\?action=reject)/.exec(text)?.[1];
  if (!approve || !reject) throw new Error(`no sponsor links in the mail to ${to}: ${text}`);
  return { approve, reject };
}

/** The tenant's domain events of `type` (the event stream). */
export async function eventsOf(redis: Redis, tenantId: string, type: string): Promise<Record<string, unknown>[]> {
  const entries = await redis.xrange(keys.events(tenantId), '-', '+');
  const out: Record<string, unknown>[] = [];
  for (const [, fields] of entries) {
    const f: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    if (f.type === type) out.push(JSON.parse(f.data ?? '{}') as Record<string, unknown>);
  }
  return out;
}
