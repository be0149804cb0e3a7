/**
 * The tenant's domain events: one durable stream per tenant
 * (keys.events), written atomically with the change that causes each event
 * (by the Lua script that makes the change, or for changes made outside
 * Redis by the code that makes them), read by every engine process: the
 * dashboard's SSE streams now, webhooks later. The wire form and each type's
 * `data` are in docs/events.md.
 *
 * Stream entry fields: `type`, `ts` (ms), `site` (hotspot id or ''), `data`
 * (JSON object). The entry id is the event's id.
 */
export const EVENT_TYPES = [
  'session.start',
  'session.end',
  'session.extend',
  'auth.success',
  'auth.failure',
  'voucher.redeemed',
  'device.new',
  'sponsor.approved',
  'sponsor.rejected',
  'incident.raised',
  'incident.updated',
  'audit.written',
  'posture.verdict',
  'nas.online',
  'nas.offline',
  'jit.requested',
  'jit.decided',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** One event as readers see it. */
export interface DomainEvent {
  /** The stream entry id ("<ms>-<seq>"): ordered within the tenant. */
  id: string;
  tenantId: string;
  type: EventType;
  /** When it happened, ms. */
  ts: number;
  /** The hotspot (site) it concerns, or null for tenant-wide events. */
  siteId: string | null;
  data: Record<string, unknown>;
}

/** The stream entry's field names, shared by Lua writers (which name this file) and the TypeScript ones. */
export const EVENT_FIELD = { type: 'type', ts: 'ts', site: 'site', data: 'data' } as const;

/**
 * Approximate length the events stream is trimmed to: about a day of a busy venue. Only
 * engine/events/event-trimmer.ts trims (writers add without MAXLEN), and never past an entry the
 * webhook router has not read.
 */
export const EVENTS_MAXLEN = 200_000;

/** Approximate length the decisions list stream is trimmed to. */
export const DECISIONS_MAXLEN = 10_000;
