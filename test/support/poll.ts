import { localDay } from '../../engine/util/local-day.js';

/** Options of {@link until}. */
export interface UntilOptions {
  /** How long to wait before failing (default 10 s). */
  timeoutMs?: number;
  /** Pause between checks (default 50 ms). */
  intervalMs?: number;
  /** Names the awaited condition in the failure message. */
  what?: string;
  /** The state the failure message should show (what was there instead). */
  seen?: () => unknown;
}

/**
 * Polls until `cond` holds or the time runs out. The one polling helper of the
 * test tree: everything that waits for a state another process or thread
 * reaches (a record in Postgres, a restarted thread) waits through here.
 */
export async function until(cond: () => boolean | Promise<boolean>, opts: UntilOptions = {}): Promise<void> {
  const { timeoutMs = 10_000, intervalMs = 50, what = 'condition', seen } = opts;
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  await arrivalsRead();
  if (await cond()) return;
  throw new Error(`${what} not met in ${timeoutMs} ms${seen ? `; last seen: ${JSON.stringify(await seen())}` : ''}`);
}

/**
 * Lets the event loop read what has already arrived on its sockets. A deadline is a timer, and a timer that came due
 * while the process was descheduled (a busy machine) runs before the loop reads its sockets: a wait that gives up
 * looks once more after this. Two turns, as a check phase follows each poll: a server in this process reads and
 * handles a message sent before the stall in the first, and its answer to this process is read in the second.
 */
export async function arrivalsRead(): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
}

/** How long a test file whose records are read back by their day may take, at most, on a slow machine. */
export const DAY_SCENARIO_MS = 90_000;

/**
 * Records are filed under the day they were made (the audit chain's day, a day's evidence pack, a partition, a
 * daily counter), so a scenario that runs across midnight would look for them under the next day. Before such a
 * scenario: when midnight in `tz` falls within the next `needMs`, waits until it has passed.
 */
export async function clearOfMidnight(needMs: number, tz = 'UTC'): Promise<void> {
  while (localDay(tz, Date.now()) !== localDay(tz, Date.now() + needMs)) await new Promise((r) => setTimeout(r, 1_000));
}
