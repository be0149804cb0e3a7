/** A seeded random source: numbers in [0, 1). */
export type Rng = () => number;

/**
 * A small seeded PRNG (mulberry32) for the fuzz tests: the same seed gives the
 * same inputs on every machine, so a failure printed with its seed replays.
 */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
