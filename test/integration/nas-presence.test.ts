import { describe, expect } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { NasPresence, PRESENCE_THROTTLE_MS } from '../../engine/nas/nas-presence.js';
import { defineScripts } from '../../engine/redis/scripts.js';
import type { NasRecord } from '../../engine/sessions/ports.js';
import { storesTest as test } from '../support/fixture.js';

/**
 * NAS presence on the RADIUS path: every packet calls saw(), which must cost
 * next to nothing; Redis sees at most one write per NAS (and per port) per
 * throttle period, in a batch.
 */
const SILENT = 300_000;
const nas = (tenantId: string, id: string): NasRecord => ({
  id, tenantId, hotspotId: 'hs_p', ip: '127.0.0.9', secret: 's', coaPort: 3799, requireMessageAuthenticator: false,
});

describe('NAS presence', () => {
  test('a thousand packets in the throttle period are one write; the next period writes again', async ({ redis, keys }) => {
    defineScripts(redis);
    const t = `tn_pres${Math.random().toString(36).slice(2, 10)}`;
    let now = Date.now();
    const presence = new NasPresence(redis, createLogger('silent'), SILENT, () => now);
    const start = now;
    for (let i = 0; i < 1000; i++) {
      presence.saw(nas(t, 'nas_a'), { nasPortId: 'Gi1/0/1', nasPort: 1 });
      now += 10; // 10 s of packets, one every 10 ms
    }
    await presence.flush();
    expect(await redis.hget(keys.nasSeen(t), 'nas_a')).toBe(String(start));
    const port = JSON.parse((await redis.hget(keys.nasPorts(t, 'nas_a'), 'Gi1/0/1'))!);
    expect(port).toEqual({ port: 'Gi1/0/1', nas_port: 1, nas_port_id: 'Gi1/0/1', called_station_id: null, ap: null, last_seen_at: new Date(start).toISOString() });

    now = start + PRESENCE_THROTTLE_MS;
    presence.saw(nas(t, 'nas_a'), { nasPortId: 'Gi1/0/1', nasPort: 1 });
    // Accounting naming the port's access point is written at once, throttle or not.
    now += 1;
    presence.saw(nas(t, 'nas_a'), { nasPortId: 'Gi1/0/1', nasPort: 1, apName: 'ap-1' });
    // ...and kept when a later packet (an Access-Request) does not name it.
    now += 1;
    presence.saw(nas(t, 'nas_a'), { nasPortId: 'Gi1/0/1', nasPort: 1 });
    await presence.close();
    expect(await redis.hget(keys.nasSeen(t), 'nas_a')).toBe(String(start + PRESENCE_THROTTLE_MS));
    expect(await redis.hlen(keys.nasPorts(t, 'nas_a'))).toBe(1);
    expect(JSON.parse((await redis.hget(keys.nasPorts(t, 'nas_a'), 'Gi1/0/1'))!)).toMatchObject({ ap: 'ap-1', last_seen_at: new Date(start + PRESENCE_THROTTLE_MS + 1).toISOString() });
    expect(await redis.ttl(keys.nasPorts(t, 'nas_a'))).toBeGreaterThan(0);
    // Heard from for the first time: one nas.online, not one per write.
    expect(await redis.xlen(keys.events(t))).toBe(1);
    await redis.del(keys.nasSeen(t), keys.nasPorts(t, 'nas_a'), keys.events(t));
  });

  test('a packet without any port field records the NAS only', async ({ redis, keys }) => {
    defineScripts(redis);
    const t = `tn_pres${Math.random().toString(36).slice(2, 10)}`;
    const presence = new NasPresence(redis, createLogger('silent'), SILENT);
    presence.saw(nas(t, 'nas_b'), {});
    await presence.close();
    expect(await redis.hexists(keys.nasSeen(t), 'nas_b')).toBe(1);
    expect(await redis.exists(keys.nasPorts(t, 'nas_b'))).toBe(0);
    await redis.del(keys.nasSeen(t), keys.events(t));
  });
});
