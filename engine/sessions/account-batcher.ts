import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';

/** One Accounting-Request as account-session-3.lua takes it (its ARGV, with the keys' parts). */
export interface AccountReport {
  tenant: string;
  hs: string;
  mac: string;
  /** The hotspot's local day (the daily counter's key). */
  day: string;
  nowMs: number;
  acctId: string;
  inOctets: number;
  outOctets: number;
  ip: string;
  ap: string;
  signal: string;
  status: 'start' | 'interim' | 'stop';
}

interface Waiting {
  report: AccountReport;
  resolve(reply: unknown[]): void;
  reject(err: unknown): void;
}

/**
 * Most reports in one script call. The script runs them one after another
 * inside Redis (a few µs each), so this bounds how long one call holds Redis
 * and how big one command is; a bigger turn is split into several calls,
 * which ioredis writes together.
 */
export const MAX_REPORTS_PER_CALL = 128;

/**
 * Sends the accounting reports an actor thread gathers in one event-loop
 * turn to Redis in one round trip per tenant: account-sessions-n.lua runs
 * each as account-session-3.lua would (one alone still goes through that
 * script: fixed keys, no loop). Each caller's promise settles with its own
 * reply once the call returns, that is once its report is in Redis: the
 * Accounting-Response still waits for that (docs/sessions.md, Accounting).
 *
 * One bad report fails alone (the blast radius of a batch is one report):
 * - a report that raises an error inside the script (a refused command, a
 *   corrupt field) is replied to as {'failed', message}; its caller's promise
 *   rejects with that message, as a lone call would, and the others settle with
 *   their replies;
 * - a call that fails as a whole (its answer lost with the connection, a time-out,
 *   Redis refusing the script) is tried again one report at a time through the
 *   single script, once: each caller settles with its own call, so a report that
 *   fails again fails alone and its NAS retransmits it.
 * Either way a caller's promise resolves only once a call that recorded its
 * report has returned. Running a report twice is harmless (totals per
 * Acct-Session-Id: the second adds nothing), so a call that failed after
 * Redis ran part of it loses and doubles nothing; the retry's byte deltas
 * are then 0, so the dashboard's activity buckets miss that batch's bytes
 * (the session's totals and the daily counter do not).
 *
 * Why a turn: the actor thread takes the main thread's messages in batches,
 * one per event-loop turn (messages.ts), and the actors reach the store
 * within that turn's microtasks; setImmediate runs after them all.
 */
export class AccountBatcher {
  private queued = new Map<string, Waiting[]>();
  private scheduled = false;
  private readonly flushNow = (): void => this.flush();

  constructor(private readonly redis: Redis) {}

  /** Queues a report for this turn's call; resolves with its script reply. */
  submit(report: AccountReport): Promise<unknown[]> {
    return new Promise<unknown[]>((resolve, reject) => {
      let list = this.queued.get(report.tenant);
      if (!list) this.queued.set(report.tenant, (list = []));
      list.push({ report, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushNow);
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const queued = this.queued;
    this.queued = new Map();
    for (const [tenant, list] of queued) {
      for (let i = 0; i < list.length; i += MAX_REPORTS_PER_CALL) {
        this.send(tenant, i === 0 && list.length <= MAX_REPORTS_PER_CALL ? list : list.slice(i, i + MAX_REPORTS_PER_CALL));
      }
    }
  }

  private send(tenant: string, list: Waiting[]): void {
    if (list.length === 1) {
      this.sendOne(list[0]!);
      return;
    }
    const n = list.length;
    const args: (string | number)[] = new Array<string | number>(1 + 2 * n + 8 * n);
    args[0] = keys.liveByAp(tenant);
    let a = 1 + 2 * n;
    for (let i = 0; i < n; i++) {
      const r = list[i]!.report;
      args[1 + 2 * i] = keys.grant(tenant, r.hs, r.mac);
      args[2 + 2 * i] = keys.dailyUsage(tenant, r.mac, r.day);
      args[a++] = r.nowMs; args[a++] = r.acctId; args[a++] = r.inOctets; args[a++] = r.outOctets;
      args[a++] = r.ip; args[a++] = r.ap; args[a++] = r.signal; args[a++] = r.status;
    }
    this.redis.accountSessionsV2(1 + 2 * n, ...args).then((replies) => {
      for (let i = 0; i < n; i++) {
        const reply = replies[i];
        if (!Array.isArray(reply)) list[i]!.reject(new Error('account-sessions-n: a report without its reply'));
        else if (reply[0] === 'failed') list[i]!.reject(new Error(`account-sessions-n: the report failed in Redis: ${String(reply[1])}`));
        else list[i]!.resolve(reply);
      }
    }, () => {
      // The whole call failed: each report once more on its own, so none fails for another's sake.
      for (const w of list) this.sendOne(w);
    });
  }

  private sendOne(w: Waiting): void {
    const r = w.report;
    this.redis.accountSessionV4(keys.grant(r.tenant, r.hs, r.mac), keys.dailyUsage(r.tenant, r.mac, r.day), keys.liveByAp(r.tenant),
      r.nowMs, r.acctId, r.inOctets, r.outOctets, r.ip, r.ap, r.signal, r.status).then(w.resolve, w.reject);
  }
}
