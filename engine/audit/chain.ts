import { hash } from 'node:crypto';

/**
 * The audit chain's rule, in one place (docs/audit-chain.md says the same in
 * prose, so a third party can verify a chain with nothing but the records).
 *
 *   canonical(record) = JSON.stringify([
 *       tenant_id, seq, event_type, timestamp, session_id, mac_address,
 *       ip_address, username, auth_method, ssid, hotspot_id, details ])
 *     - timestamp: ISO 8601 UTC with milliseconds, e.g. 2026-11-22T04:11:48.123Z
 *     - absent text fields are "" (never null); seq is a JSON number
 *     - details: an object with its keys sorted, recursively
 *   hash_chain_value = "sha256:" + hex(SHA-256(UTF-8(prev_hash + "\n" + canonical(record))))
 *   prev_hash of seq 1 = GENESIS; of seq n = hash_chain_value of seq n-1
 */
export const GENESIS = 'sha256:' + '0'.repeat(64);

/**
 * The fields a chain link covers: the contract's audit record (event_type, timestamp,
 * session_id, mac_address, ip_address, username, auth_method, ssid) plus tenant,
 * sequence, hotspot and details.
 */
export interface ChainFields {
  tenant_id: string;
  seq: number;
  event_type: string;
  timestamp: string;
  session_id: string;
  mac_address: string;
  ip_address: string;
  username: string;
  auth_method: string;
  ssid: string;
  hotspot_id: string;
  details: Record<string, unknown>;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    // Already in order with nothing nested (the sink writes its details so): serialised as it is.
    let done = true;
    for (let i = 0; i < keys.length && done; i++) {
      const x = o[keys[i]!];
      if ((i > 0 && keys[i - 1]! > keys[i]!) || (x !== null && typeof x === 'object')) done = false;
    }
    if (done) return o;
    return Object.fromEntries(keys.sort().map((k) => [k, sortKeys(o[k])]));
  }
  return v;
}

export function canonical(r: ChainFields): string {
  return JSON.stringify([
    r.tenant_id, r.seq, r.event_type, r.timestamp, r.session_id, r.mac_address, r.ip_address,
    r.username, r.auth_method, r.ssid, r.hotspot_id, sortKeys(r.details),
  ]);
}

export function link(prevHash: string, r: ChainFields): string {
  // One-shot crypto.hash (Node 20.12+): no Hash object for each link.
  return 'sha256:' + hash('sha256', prevHash + '\n' + canonical(r), 'hex');
}

/** A stored record, as read back for verification. */
export interface StoredLink extends ChainFields {
  id: string;
  prev_hash: string;
  hash_chain_value: string;
}

export type ChainBreak = {
  seq: number;
  id: string;
  problem: 'hash_mismatch' | 'broken_link' | 'sequence_gap';
  detail: string;
};

/**
 * Walks records in seq order and names the first that breaks the chain:
 * an edited record fails its own hash, a deleted one leaves a gap, a
 * reordered one no longer links to the hash before it.
 * `before` is the link just before the first record (GENESIS at seq 1).
 */
export class ChainVerifier {
  private expectSeq: number | null;
  private expectPrev: string | null;
  count = 0;
  firstBreak: ChainBreak | null = null;

  constructor(before: { seq: number; hash: string } | null) {
    this.expectSeq = before ? before.seq + 1 : null;
    this.expectPrev = before ? before.hash : null;
  }

  /** Feeds the next record; returns false once the chain is broken. */
  push(r: StoredLink): boolean {
    if (this.firstBreak) return false;
    this.count++;
    if (this.expectSeq === null && r.seq === 1) this.expectPrev = GENESIS;
    if (this.expectSeq !== null && r.seq !== this.expectSeq) {
      return this.fail(r, 'sequence_gap', `expected seq ${this.expectSeq}, found ${r.seq}`);
    }
    if (this.expectPrev !== null && r.prev_hash !== this.expectPrev) {
      return this.fail(r, 'broken_link', `prev_hash ${r.prev_hash} is not the hash of the record before (${this.expectPrev})`);
    }
    const h = link(r.prev_hash, r);
    if (h !== r.hash_chain_value) return this.fail(r, 'hash_mismatch', `stored ${r.hash_chain_value}, recomputed ${h}`);
    this.expectSeq = r.seq + 1;
    this.expectPrev = r.hash_chain_value;
    return true;
  }

  private fail(r: StoredLink, problem: ChainBreak['problem'], detail: string): boolean {
    this.firstBreak = { seq: r.seq, id: r.id, problem, detail };
    return false;
  }
}
