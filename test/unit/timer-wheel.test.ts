import { describe, expect, it } from 'vitest';
import { TimerWheel } from '../../engine/index.js';

interface E { slot: number; name: string }
const entry = (name: string): E => ({ slot: 0, name });

describe('TimerWheel', () => {
  it('fires entries in their second, oldest first, and only once', () => {
    const w = new TimerWheel<E>(1_000_000);
    const a = entry('a'), b = entry('b'), c = entry('c');
    w.schedule(a, 1_003_000);
    w.schedule(b, 1_001_200); // rounds up to second 1002
    w.schedule(c, 1_010_000);
    const fired: string[] = [];
    w.advance(1_002_000, (e) => fired.push(e.name));
    expect(fired).toEqual(['b']);
    w.advance(1_005_000, (e) => fired.push(e.name));
    expect(fired).toEqual(['b', 'a']);
    w.advance(1_005_000, (e) => fired.push(e.name));
    expect(fired).toEqual(['b', 'a']);
    expect(w.size).toBe(1);
  });

  it('moves and cancels entries in O(1) without firing them', () => {
    const w = new TimerWheel<E>(0);
    const a = entry('a');
    w.schedule(a, 5_000);
    w.schedule(a, 60_000);
    const fired: string[] = [];
    w.advance(10_000, (e) => fired.push(e.name));
    expect(fired).toEqual([]);
    w.cancel(a);
    w.advance(100_000, (e) => fired.push(e.name));
    expect(fired).toEqual([]);
    expect(w.size).toBe(0);
  });

  it('files a past deadline into the next second, never into a slot already passed', () => {
    const w = new TimerWheel<E>(50_000);
    const a = entry('a');
    w.schedule(a, 1_000);
    const fired: string[] = [];
    w.advance(51_000, (e) => fired.push(e.name));
    expect(fired).toEqual(['a']);
  });

  it('a tick visits only due entries: 100k far-future entries are not touched', () => {
    const w = new TimerWheel<E>(0);
    for (let i = 0; i < 100_000; i++) w.schedule(entry(`far${i}`), 3_600_000 + i);
    const near = entry('near');
    w.schedule(near, 2_000);
    let visits = 0;
    w.advance(2_000, () => visits++);
    expect(visits).toBe(1);
    expect(w.size).toBe(100_000);
  });
});
