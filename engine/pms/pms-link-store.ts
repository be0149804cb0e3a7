import { Errors } from '../errors.js';
import type { OutboundPolicy } from '../net/outbound-target.js';
import type { Pool } from '../store/postgres.js';

/** A hotel's PMS link as the tenant sets it (PUT /v1/hotspots/{id}/pms). */
export interface PmsLinkConfig {
  hotspot_id: string;
  tenant_id: string;
  protocol: 'fias';
  host: string;
  port: number;
  /** A link silent longer than this asks for a database resync when it comes back; 0: at every reconnection. */
  resync_after_gap_sec: number;
  enabled: boolean;
  updated_at: string;
}

export interface PmsLinkInput { host: string; port: number; resync_after_gap_sec?: number; enabled?: boolean }

/** Default gap after which a returning link resyncs: shorter gaps are replayed by the PMS's own queue. */
export const DEFAULT_RESYNC_AFTER_GAP_SEC = 300;

interface Row { hotspot_id: string; tenant_id: string; protocol: 'fias'; host: string; port: number; resync_after_gap_sec: number; enabled: boolean; updated_at: Date }

const toConfig = (r: Row): PmsLinkConfig => ({
  hotspot_id: r.hotspot_id, tenant_id: r.tenant_id, protocol: r.protocol, host: r.host, port: r.port,
  resync_after_gap_sec: r.resync_after_gap_sec, enabled: r.enabled, updated_at: r.updated_at.toISOString(),
});

/** The links in Postgres (table pms_links, migration 019). */
export class PmsLinkStore {
  constructor(private readonly pool: Pool, private readonly outbound: OutboundPolicy) {}

  async get(tenantId: string, hotspotId: string): Promise<PmsLinkConfig | null> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM pms_links WHERE tenant_id = $1 AND hotspot_id = $2', [tenantId, hotspotId]);
    return rows[0] ? toConfig(rows[0]) : null;
  }

  /** Every link of every tenant: what the link holders scan. */
  async all(): Promise<PmsLinkConfig[]> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM pms_links ORDER BY hotspot_id');
    return rows.map(toConfig);
  }

  /**
   * Creates or replaces a hotspot's link. The host goes through the outbound
   * check now (400 target_not_allowed) and again at every connection.
   */
  async put(tenantId: string, hotspotId: string, input: PmsLinkInput): Promise<PmsLinkConfig> {
    await this.outbound.checkUrl('host', `tcp://${hostForUrl(input.host)}:${input.port}`, ['tcp:']);
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO pms_links (hotspot_id, tenant_id, host, port, resync_after_gap_sec, enabled)
       SELECT id, tenant_id, $3, $4, $5, $6 FROM hotspots WHERE id = $2 AND tenant_id = $1
       ON CONFLICT (hotspot_id) DO UPDATE SET host = EXCLUDED.host, port = EXCLUDED.port,
         resync_after_gap_sec = EXCLUDED.resync_after_gap_sec, enabled = EXCLUDED.enabled, updated_at = clock_timestamp()
       RETURNING *`,
      [tenantId, hotspotId, input.host, input.port, input.resync_after_gap_sec ?? DEFAULT_RESYNC_AFTER_GAP_SEC, input.enabled ?? true]);
    if (!rows[0]) throw Errors.HOTSPOT_NOT_FOUND();
    return toConfig(rows[0]);
  }

  /** Removes a hotspot's link; false when it had none. */
  async remove(tenantId: string, hotspotId: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM pms_links WHERE tenant_id = $1 AND hotspot_id = $2', [tenantId, hotspotId]);
    return (r.rowCount ?? 0) > 0;
  }
}

/** An IPv6 literal in brackets, so it reads as a URL's host. */
function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
