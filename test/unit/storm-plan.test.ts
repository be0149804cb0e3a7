import { describe, expect, it } from 'vitest';
import { StormPlan, type StormEvent } from '../../bench/storm-plan.js';

const shape = { guests: 10, rate: 5, interimSec: 1, staySec: 0, tailSec: 1, otpShare: 0 };

/** Every event of a plan, taken in steps of `stepMs` as the storm's clock would. */
function drain(plan: StormPlan, stepMs: number): StormEvent[] {
  const out: StormEvent[] = [];
  for (let t = 0; !plan.exhausted(t); t += stepMs) plan.due(t, out);
  return out;
}

describe('the stadium storm schedule (open loop)', () => {
  it('puts guest i at i / rate and its interims every interval after, none at or past the end', () => {
    const plan = new StormPlan(shape);
    expect(plan.lastArrivalMs).toBe(1800);
    expect(plan.endMs).toBe(2800);
    const events = drain(plan, 7);
    expect(events.filter((e) => e.kind === 'arrive').map((e) => e.dueMs)).toEqual([0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800]);
    // Round 1: arrivals before 1800 ms; round 2: before 800 ms.
    const interims = events.filter((e) => e.kind === 'interim');
    expect(interims.filter((e) => e.kind === 'interim' && e.round === 1).map((e) => e.guest)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(interims.filter((e) => e.kind === 'interim' && e.round === 2).map((e) => e.guest)).toEqual([0, 1, 2, 3]);
    expect(events.every((e) => e.dueMs < plan.endMs)).toBe(true);
    expect(events.some((e) => e.kind === 'stop')).toBe(false);
  });

  it('hands out everything due at once after a stall, each with its own due time: nothing waits for an answer', () => {
    const plan = new StormPlan(shape);
    const late = plan.due(1500, []);
    expect(late.filter((e) => e.kind === 'arrive')).toHaveLength(8);
    expect(late.filter((e) => e.kind === 'interim').map((e) => e.dueMs)).toEqual([1000, 1200, 1400]);
    // Taken once: the next call gives only what came due since.
    expect(plan.due(1500, [])).toEqual([]);
    expect(plan.due(1600, []).map((e) => `${e.kind} ${e.guest}`)).toEqual(['arrive 8', 'interim 3']);
  });

  it('sends a Stop after the stay, and no interim at or after it', () => {
    const plan = new StormPlan({ ...shape, interimSec: 0.5, staySec: 1 });
    const events = drain(plan, 13);
    const stops = events.filter((e) => e.kind === 'stop');
    // Stops before the end (2800 ms): arrivals before 1800 ms.
    expect(stops.map((e) => e.guest)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    for (const s of stops) {
      const after = events.filter((e) => e.kind === 'interim' && e.guest === s.guest && e.dueMs >= s.dueMs);
      expect(after).toEqual([]);
      // One interim at +500 ms before the Stop at +1000 ms.
      expect(events.filter((e) => e.kind === 'interim' && e.guest === s.guest)).toHaveLength(1);
    }
  });

  it('spreads the SMS share evenly', () => {
    const plan = new StormPlan({ ...shape, guests: 1000, otpShare: 0.25 });
    let otp = 0;
    for (let i = 0; i < 1000; i++) if (plan.isOtp(i)) otp++;
    expect(otp).toBe(250);
    expect([0, 1, 2, 3].filter((i) => plan.isOtp(i))).toHaveLength(1);
    expect(new StormPlan(shape).isOtp(5)).toBe(false);
  });

  it('refuses a shape it cannot schedule', () => {
    expect(() => new StormPlan({ ...shape, rate: 0 })).toThrow(/rate > 0/);
  });
});
