import { describe, expect, it } from 'vitest';
import { readScript } from '../../engine/redis/scripts.js';
import { ACTIVITY, ACTIVITY_TTL } from '../../engine/redis/records.js';

/**
 * Lua cannot import TypeScript: the scripts that write events and activity
 * carry the limits and field names as literals. These must stay what
 * engine/events/types.ts and engine/redis/records.ts say.
 */
describe('Lua activity constants', () => {
  const constant = (lua: string, name: string): number => Number(new RegExp(`local ${name} = (\\d+)`).exec(lua)?.[1]);

  it('the bucket lifetimes match the TypeScript contract', () => {
    // The events stream bound is no writer's any more: test/unit/events-untrimmed-writers.test.ts.
    const act = readScript('use-voucher-18.lua');
    expect(constant(act, 'ACTIVITY_TTL_MINUTE')).toBe(ACTIVITY_TTL.minute);
    expect(constant(act, 'ACTIVITY_TTL_HOUR')).toBe(ACTIVITY_TTL.hour);
  });

  it('the field names the scripts count are the ACTIVITY names', () => {
    // Accounting's byte counts are the tally's (engine/events/activity-tally.ts), which names them by ACTIVITY itself.
    const lua = readScript('use-voucher-18.lua') + readScript('end-session-10.lua');
    for (const field of [ACTIVITY.starts, ACTIVITY.ends, ACTIVITY.durationSec]) {
      expect(lua, field).toContain(`'${field}', `);
    }
  });
});
