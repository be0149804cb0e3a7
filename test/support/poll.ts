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
  throw new Error(`${what} not met in ${timeoutMs} ms${seen ? `; last seen: ${JSON.stringify(await seen())}` : ''}`);
}
