/**
 * The records the Lua scripts write, defined once: the fields of a session's
 * grant hash, and the outbox records that carry session events to Postgres.
 *
 * Lua cannot import this file; every script that reads or writes one of these
 * records names it in its header, so a change here is a change there too (and
 * a version bump of the script's name in scripts.ts when its contract moves).
 */

/** How a guest got in: the sessions row's `auth_method` and the audit record's. */
export type AuthMethod = 'voucher' | 'sms_otp' | 'msgapp_otp' | 'email' | 'sponsor' | 'pms';

/**
 * The fields of a session's grant hash, `keys.grant(tenant, hotspot, mac)`.
 * Written whole by the session start (lua/includes/session-start.lua); the
 * accounting fields by account-session-3.lua, `nas`/`nuser` by
 * remember-nas-2.lua (with `ssid` when the NAS names one), `until` (and `xop`, the last extend's operation id) by extend-session-4.lua.
 */
export const GRANT = {
  /** Session id (sess_...). */
  sid: 'sid',
  hotspot: 'hs',
  mac: 'mac',
  /** End of the session, ms. */
  until: 'until',
  method: 'method',
  /** Who signed in: the voucher code, a phone number, an e-mail address. */
  user: 'user',
  /** The voucher's id ('' for other methods). */
  voucherId: 'vid',
  downKbps: 'down',
  upKbps: 'up',
  /** Daily quota, MB (0 none). */
  quotaMb: 'quota',
  /** Session quota, MB, download and upload together (0 none). */
  sessionQuotaMb: 'squota',
  /** Idle time-out, s (0 none). */
  idleSec: 'idle',
  /** Bandwidth profile name ('' none). */
  profile: 'profile',
  ip: 'ip',
  /** The SSID the device is on: the NAS's word once it names one (Called-Station-Id), the portal's until then. */
  ssid: 'ssid',
  /**
   * The SSIDs the session may use, newline separated ('' any): a voucher's
   * list, enforced on every Access-Request (engine/sessions/decide.ts).
   */
  ssids: 'ssids',
  /** Start of the session, ms. */
  created: 'created',
  /** Last traffic seen, ms. */
  last: 'last',
  bytesIn: 'bin',
  bytesOut: 'bout',
  /** The session's current Acct-Session-Id. */
  acctId: 'aid',
  /** Per Acct-Session-Id, the last totals seen: field `a:<Acct-Session-Id>` = "in out". */
  acctTotalsPrefix: 'a:',
  /** Totals kept before there was a field per Acct-Session-Id (read, then removed, by accounting). */
  legacyIn: 'ain',
  legacyOut: 'aout',
  apName: 'ap',
  signal: 'signal',
  /** The NAS speaking for the session and the User-Name it uses for it. */
  nasId: 'nas',
  nasUser: 'nuser',
} as const;

/** A grant hash as HGETALL returns it. */
export type GrantHash = Readonly<Record<string, string | undefined>>;

/**
 * The outbox record types (the `type` stream field and the record's own
 * `type`). `voucher_use` is only read: entries queued by a version before the
 * method-neutral start (a rolling upgrade) are stored as session starts.
 */
export const RECORD = {
  sessionStart: 'session_start',
  legacyVoucherUse: 'voucher_use',
  sessionExtend: 'session_extend',
  sessionEnd: 'session_end',
  audit: 'audit',
} as const;

/** Queued by the session start (lua/includes/session-start.lua), every method alike. All values text. */
export interface SessionStartRecord {
  type: 'session_start';
  sid: string;
  hs: string;
  mac: string;
  ip: string;
  ssid: string;
  /** Start, ms. */
  at: string;
  /** End, ms. */
  until: string;
  user: string;
  method: AuthMethod;
  /** The voucher used, '' for other methods. */
  vid: string;
  /** The device type the guest's browser claimed (engine/reports/device-type.ts); '' none (RADIUS, sponsor, an older process): other. */
  dt?: string;
}

/** What use-voucher-8.lua queued before the start became method-neutral (use: the use's id, never stored). */
export interface LegacyVoucherUseRecord extends Omit<SessionStartRecord, 'type' | 'method'> {
  type: 'voucher_use';
  use: string;
  method?: string;
}

/** Queued by lua/includes/session-end-record.lua: end-session-10.lua, and the start that replaces a session. */
export interface SessionEndRecord {
  type: 'session_end';
  sid: string;
  hs: string;
  mac: string;
  at: string;
  reason: string;
  bin: string;
  bout: string;
  ip: string;
  ssid: string;
  user: string;
  method: string;
  /** Operator subject, or ''. */
  by: string;
}

/** Queued by extend-session-10.lua. */
export interface SessionExtendRecord {
  type: 'session_extend';
  sid: string;
  hs: string;
  mac: string;
  at: string;
  minutes: string;
  until: string;
  ip: string;
  ssid: string;
  user: string;
  method: string;
  by: string;
}

/** An operator event (engine/audit/audit-log.ts), queued as field pairs. */
export interface OperatorAuditRecord {
  type: 'audit';
  rid: string;
  event: string;
  at: string;
  by: string;
  hs: string;
  mac: string;
  /** JSON object. */
  details: string;
}

export type OutboxRecordShape =
  | SessionStartRecord | LegacyVoucherUseRecord | SessionEndRecord | SessionExtendRecord | OperatorAuditRecord;

/**
 * Dashboard activity, counted as it happens into per-minute and per-hour
 * hashes (keys.activityMinute / keys.activityHour) by the Lua scripts that
 * make the change (session start, end, accounting) and by the decision sink
 * (engine/views/). Readers sum a window of buckets: the cost of a tile
 * does not grow with the number of sessions. A field is counted tenant-wide
 * and again per hotspot as `<field>@<hotspot id>` (perSite); decisions also
 * per method as `<field>#<auth method>` (perMethod) and rejects per reason as
 * `r:<reason>` (rejectReason).
 */
export const ACTIVITY = {
  /** Sessions started: in the minute bucket and tenant-wide only (its one reader, the live panel's connects per minute; lua/includes/activity.lua countMinute). */
  starts: 'start',
  /** Sessions ended (any reason): tenant-wide only, in both buckets (the live panel's disconnects per minute, ends of 24 h). */
  ends: 'end',
  /** Sum of ended sessions' durations, s: tenant-wide, in the hour bucket only (the live panel's average of 24 h). */
  durationSec: 'dur',
  /** Accounting deltas, bytes (downloaded by the guest = in, as the sessions API counts them). */
  bytesIn: 'bin',
  bytesOut: 'bout',
  /** Sign-in decisions: accepted, rejected, and rejected for a reason on our side (an HTTP status >= 500: engine, store or provider failure). */
  accepts: 'acc',
  rejects: 'rej',
  errors: 'err',
  /** Posture verdicts received that were fail or drift. */
  postureFail: 'pfail',
} as const;

export const perSite = (field: string, hotspotId: string): string => `${field}@${hotspotId}`;
export const perMethod = (field: string, method: string): string => `${field}#${method}`;
export const rejectReason = (reason: string): string => `r:${reason}`;
/**
 * Sign-ins accepted or rejected in one 10-second step of a minute bucket: `<field>~<k>`, k = floor(ms / 10000) % 6
 * (record-decisions-6.lua), in the minute hash only. The failure-surge detector sums a sliding window of them.
 */
export const perStep = (field: string, stepInMinute: number): string => `${field}~${stepInMinute}`;
/**
 * A sign-in tally field read back, or null for any other field. Sign-ins per hotspot, method and outcome are
 * counted in an hour bucket only: `m:a:<method>@<hotspot>` (accepted), `m:r:...` (rejected); record-decisions-6.lua
 * writes them, and the console's reports move them into Postgres (signin-mover.ts).
 */
export function parseSignInTally(field: string): { accept: boolean; method: string; hotspotId: string } | null {
  const m = /^m:([ar]):([a-z_]+)@(.+)$/.exec(field);
  return m ? { accept: m[1] === 'a', method: m[2]!, hotspotId: m[3]! } : null;
}

/** Seconds each activity key lives after its first write (a bucket is written only during its own minute, hour or step): long enough for the widest window read from it. */
export const ACTIVITY_TTL = { step: 180, minute: 2 * 3600 + 120, hour: 25 * 3600 + 600 } as const;
