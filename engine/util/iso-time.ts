/**
 * `new Date(ms).toISOString()`, remembered: the outbox sink formats four
 * times for every record it stores (the chain's timestamp, the planned end
 * in its details, the session row's start and end), and in a burst many
 * records share a millisecond. A small table indexed by the time's low bits
 * keeps the last text for each slot. Throws RangeError for a time that is
 * not one, as toISOString does.
 */
export function isoTime(ms: number): string {
  const slot = ms & (SLOTS - 1);
  if (times[slot] === ms) return texts[slot]!;
  const text = new Date(ms).toISOString();
  times[slot] = ms;
  texts[slot] = text;
  return text;
}

const SLOTS = 256;
const times = new Float64Array(SLOTS).fill(NaN);
const texts: string[] = new Array<string>(SLOTS).fill('');
