/**
 * `new Date(ms).toISOString()`, remembered: the outbox sink formats four
 * times for every record it stores (the chain's timestamp, the planned end
 * in its details, the session row's start and end), and in a burst many
 * records share a millisecond. A small table keeps the last text for each
 * slot. The slot mixes higher bits in: a session's start and planned end are
 * whole minutes apart, and a day is 2^10 * 84375 ms, so the low bits alone
 * would put both in one slot and each would push the other out. Throws
 * RangeError for a time that is not one, as toISOString does.
 */
export function isoTime(ms: number): string {
  const slot = (ms ^ (ms >>> 16)) & (SLOTS - 1);
  if (times[slot] === ms) return texts[slot]!;
  const text = new Date(ms).toISOString();
  times[slot] = ms;
  texts[slot] = text;
  return text;
}

const SLOTS = 256;
const times = new Float64Array(SLOTS).fill(NaN);
const texts: string[] = new Array<string>(SLOTS).fill('');
