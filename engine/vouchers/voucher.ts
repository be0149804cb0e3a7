import { Errors } from '../errors.js';

/** A voucher row as stored in Postgres. */
export interface VoucherRow {
  id: string;
  tenant_id: string;
  code: string;
  max_uses: number | null;
  current_uses: number;
  expires_at: Date | null;
  bandwidth_profile: string | null;
  daily_quota_mb: number | null;
  /** Data one session may use, in and out together, MB; null: none. */
  session_quota_mb: number | null;
  duration_minutes: number | null;
  bandwidth_down_mbps: number | null;
  bandwidth_up_mbps: number | null;
  ssids: string[];
  notes: string | null;
  source: string;
  /** The console batch or CSV import that made it (`vbt_...`); null for one made alone. */
  batch_id: string | null;
  /** Match-day window: refused before `valid_from`, expired after `valid_until`; null: open. */
  valid_from: Date | null;
  valid_until: Date | null;
  created_at: Date;
}

/**
 * Console states: created (not used yet), activated (used, below max_uses),
 * used (max_uses reached), expired (expires_at or the match-day window's end,
 * valid_until, passed: the earlier of the two). The public API folds
 * `created` and `activated` into `active`: a voucher that can still be used.
 * `used` and `expired` are the same on both surfaces. A used voucher stays
 * `used` after its date passes. A voucher whose window has not opened yet is
 * `created` (`active`): no state of its own, so the status set API clients
 * know stays as it is; its record's `valid_from` says when (docs/vouchers.md).
 */
export type ConsoleStatus = 'created' | 'activated' | 'used' | 'expired';
export type PublicStatus = 'active' | 'used' | 'expired';
export const STATUS_FILTERS = ['created', 'activated', 'used', 'expired', 'active'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/** When a voucher stops working: the earlier of expires_at and valid_until; null: never. */
export function voucherEnd(v: { expires_at: Date | null; valid_until?: Date | null }): Date | null {
  const a = v.expires_at, b = v.valid_until ?? null;
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}

export function consoleStatus(v: { max_uses: number | null; expires_at: Date | null; valid_until?: Date | null }, uses: number, nowMs: number): ConsoleStatus {
  if (v.max_uses !== null && uses >= v.max_uses) return 'used';
  const end = voucherEnd(v);
  if (end !== null && nowMs >= end.getTime()) return 'expired';
  return uses > 0 ? 'activated' : 'created';
}

/**
 * A match-day window as a creation gives it: both ends optional; the end
 * after the start, and not already over (a voucher born expired is a typo,
 * not a wish). Throws validation_failed naming the field.
 */
export function checkWindow(from: Date | null | undefined, until: Date | null | undefined, nowMs: number): void {
  if (from && until && until.getTime() <= from.getTime()) {
    throw Errors.VALIDATION_FAILED('valid_until must be after valid_from', [{ field: 'valid_until', message: 'not after valid_from' }]);
  }
  if (until && until.getTime() <= nowMs) {
    throw Errors.VALIDATION_FAILED('valid_until has already passed: the window would be over before the voucher exists',
      [{ field: 'valid_until', message: 'in the past' }]);
  }
}

export function publicStatus(s: ConsoleStatus): PublicStatus {
  return s === 'created' || s === 'activated' ? 'active' : s;
}

/** SQL condition for a status filter on table alias v (uses the Postgres counter). */
export function statusCondition(filter: StatusFilter): string {
  const used = 'v.max_uses IS NOT NULL AND v.current_uses >= v.max_uses';
  const expired = '((v.expires_at IS NOT NULL AND v.expires_at <= now()) OR (v.valid_until IS NOT NULL AND v.valid_until <= now()))';
  switch (filter) {
    case 'used': return `(${used})`;
    case 'expired': return `(NOT (${used}) AND ${expired})`;
    case 'active': return `(NOT (${used}) AND NOT (${expired}))`;
    case 'created': return `(v.current_uses = 0 AND NOT (${used}) AND NOT (${expired}))`;
    case 'activated': return `(v.current_uses > 0 AND NOT (${used}) AND NOT (${expired}))`;
  }
}

/** The public API's voucher record. */
export interface PublicVoucher {
  id: string;
  code: string;
  max_uses: number | null;
  current_uses: number;
  status: PublicStatus;
  created_at: string;
  expires_at: string | null;
  duration_minutes: number | null;
  bandwidth_down_mbps: number | null;
  bandwidth_up_mbps: number | null;
  bandwidth_profile: string | null;
  daily_quota_mb: number | null;
  session_quota_mb: number | null;
  ssids: string[];
  notes: string | null;
  /** Match-day window (ISO 8601 UTC); null: open on that side. */
  valid_from: string | null;
  valid_until: string | null;
}

export interface ConsoleVoucher extends Omit<PublicVoucher, 'status'> {
  status: ConsoleStatus;
}

function base(r: VoucherRow, uses: number): Omit<PublicVoucher, 'status'> {
  return {
    id: r.id, code: r.code, max_uses: r.max_uses, current_uses: uses,
    created_at: r.created_at.toISOString(), expires_at: r.expires_at ? r.expires_at.toISOString() : null,
    duration_minutes: r.duration_minutes, bandwidth_down_mbps: r.bandwidth_down_mbps, bandwidth_up_mbps: r.bandwidth_up_mbps,
    bandwidth_profile: r.bandwidth_profile, daily_quota_mb: r.daily_quota_mb, session_quota_mb: r.session_quota_mb,
    ssids: r.ssids, notes: r.notes,
    valid_from: r.valid_from ? r.valid_from.toISOString() : null, valid_until: r.valid_until ? r.valid_until.toISOString() : null,
  };
}

/** A row as the public API shows it, with `uses` the live counter. */
export function toPublic(r: VoucherRow, uses: number, nowMs: number): PublicVoucher {
  return { ...base(r, uses), status: publicStatus(consoleStatus(r, uses, nowMs)) };
}

/** A row as the console shows it, with `uses` the live counter. */
export function toConsole(r: VoucherRow, uses: number, nowMs: number): ConsoleVoucher {
  return { ...base(r, uses), status: consoleStatus(r, uses, nowMs) };
}
