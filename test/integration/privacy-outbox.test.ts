import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { Erasure } from '../../engine/privacy/erasure.js';
import { SubjectKeys, type Subject } from '../../engine/privacy/subject.js';
import { keys, luaTest as test } from '../support/lua.js';

type Settling = { outboxNames(tenantId: string, subjects: Subject[]): Promise<boolean> };

/**
 * Review finding 15: an erasure waits until no outbox record names the subject. It read the first
 * 10,000 entries only, so behind a long outbox (the store down for a while) a waiting session record
 * went unseen and reached Postgres after the erasure, identity and all.
 */
describe('erasure: the outbox is read to its end', () => {
  test('a record naming the subject behind 10,000 others is seen; a longer number is not the subject', async ({ redis, tenant: t }) => {
    const subject = new SubjectKeys(new Uint8Array(32)).of(t, 'phone', '+905321234567');
    const erasure = new Erasure(null as never, redis as Redis, null as never, null as never, null as never, () => Date.now()) as unknown as Settling;
    const outbox = keys.outbox(t);
    for (let i = 0; i < 10_001; i += 1000) {
      const p = redis.pipeline();
      for (let j = i; j < Math.min(i + 1000, 10_001); j++) p.xadd(outbox, '*', 'type', 'session_start', 'user', `+905321234567${j % 10}`);
      await p.exec();
    }
    expect(await erasure.outboxNames(t, [subject])).toBe(false);
    await redis.xadd(outbox, '*', 'type', 'session_end', 'user', '+905321234567');
    expect(await redis.xlen(outbox)).toBe(10_002);
    expect(await erasure.outboxNames(t, [subject])).toBe(true);
  });
});
