import { EVENT_FIELD, EVENT_TYPES, type DomainEvent, type EventType } from './types.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * One entry of a tenant's events stream (keys.events) as XREAD/XRANGE give
 * it, `id` and the flat field list, read into a DomainEvent. Null for an
 * entry of a type this build does not know: a newer writer's event (during a
 * rolling deploy) is skipped, not mistaken for another. A `data` that is no
 * JSON object reads as {}: readers of this stream only need the type, time
 * and site, and one bad entry must not stop the reader.
 */
export function parseEventEntry(tenantId: string, id: string, fields: readonly string[]): DomainEvent | null {
  let type = '';
  let ts = Number.NaN;
  let site = '';
  let raw = '';
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const v = fields[i + 1]!;
    switch (fields[i]) {
      case EVENT_FIELD.type: type = v; break;
      case EVENT_FIELD.ts: ts = Number(v); break;
      case EVENT_FIELD.site: site = v; break;
      case EVENT_FIELD.data: raw = v; break;
    }
  }
  if (!KNOWN_TYPES.has(type)) return null;
  // The id's time part is when Redis added the entry: a fallback for an entry without a usable ts.
  if (!Number.isFinite(ts)) ts = Number(id.slice(0, id.indexOf('-')));
  return new StreamEvent(id, tenantId, type as EventType, ts, site === '' ? null : site, raw);
}

/**
 * A DomainEvent read from the stream, whose `data` is parsed when first
 * asked for: the dashboard's streams need only type, time and site, and a
 * sign-in surge brings thousands of entries a second. `data` is a getter,
 * so a spread copy would lack it; toJSON keeps it in JSON (a webhook body).
 */
class StreamEvent implements DomainEvent {
  private parsed: Record<string, unknown> | null = null;

  constructor(readonly id: string, readonly tenantId: string, readonly type: EventType, readonly ts: number,
    readonly siteId: string | null, private readonly raw: string) {}

  get data(): Record<string, unknown> {
    return (this.parsed ??= parseData(this.raw));
  }

  toJSON(): DomainEvent {
    return { id: this.id, tenantId: this.tenantId, type: this.type, ts: this.ts, siteId: this.siteId, data: this.data };
  }
}

function parseData(raw: string): Record<string, unknown> {
  if (raw === '') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
