import { nodeFor, type RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { namesAny, pseudonymise, type Subject } from './subject.js';

/** What one Redis key holds about a subject: the key itself (its name names the subject) or some of its entries. */
export interface RedisFinding {
  key: string;
  type: string;
  /** The key's name names the subject: the whole key is about them. */
  whole: boolean;
  /** The entries that name the subject: hash `field=value`, set or sorted-set members, list items, stream `id fields-json`, a string's value. */
  entries: string[];
  /** A record on its way to the legal store (the outbox, an operator audit intent) or refused by it (its dead letters): kept under the hold, never scrubbed here. */
  held: boolean;
}

export interface RedisScrub {
  keys_deleted: number;
  entries_removed: number;
  values_pseudonymised: number;
  held_entries: number;
}

const PAGE = 500;

/**
 * Finds and removes a subject's traces in a tenant's Redis keys. Every key of the tenant is visited
 * (SCAN over `{t:T}:*`, never KEYS): a guest's MAC or phone can sit in a key's name (a grant, a daily
 * counter, an OTP limit), a hash field (known devices), a value (a webhook body, a session reference),
 * a set or stream entry (events, decisions, delivery attempts). Values are compared as text, so a new
 * key shape is covered without a change here; the test scans every key again afterwards.
 */
export class RedisPersonalData {
  constructor(private readonly redis: Redis) {}

  /** Every key of the tenant that names any of the subjects, one at a time (an export streams them): one SCAN for all of them. */
  async *find(tenantId: string, subjects: Subject[]): AsyncGenerator<RedisFinding> {
    const names = namesAny(subjects);
    // Records on their way to the legal store, and the operator audit intents about to become such records (engine/audit/audit-log.ts).
    const heldKeys = new Set([keys.outbox(tenantId), keys.outboxDead(tenantId), keys.auditIntents(tenantId)]);
    // SCAN walks one server: on a cluster, the master that serves the tenant's slot (all its keys share its hash tag).
    const node = await nodeFor(this.redis, keys.loaded(tenantId));
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', keys.tenantScan(tenantId), 'COUNT', PAGE);
      cursor = next;
      for (const key of batch) {
        const found = await this.inspect(key, names, heldKeys.has(key));
        if (found) yield found;
      }
    } while (cursor !== '0');
  }

  /**
   * Removes the subject from every key but the held ones: keys named after them go; hash fields and
   * set, list and stream entries naming them go; hash values and strings that only mention them inside
   * (a webhook body kept for redelivery) are rewritten with the pseudonym.
   */
  async scrub(tenantId: string, subjects: Subject[]): Promise<RedisScrub> {
    const out: RedisScrub = { keys_deleted: 0, entries_removed: 0, values_pseudonymised: 0, held_entries: 0 };
    const names = namesAny(subjects);
    const rewrite = (v: string): string => subjects.reduce((t, s) => pseudonymise(t, s), v);
    for await (const f of this.find(tenantId, subjects)) {
      if (f.held) { out.held_entries += f.entries.length; continue; }
      if (f.whole) { out.keys_deleted += await this.redis.del(f.key); continue; }
      switch (f.type) {
        case 'hash': {
          for (const e of f.entries) {
            const eq = e.indexOf('=');
            const field = e.slice(0, eq);
            const value = e.slice(eq + 1);
            if (names(field)) out.entries_removed += await this.redis.hdel(f.key, field);
            // Compare-and-set: a field deleted or changed since the scan (a committed audit intent, a delivered webhook body) stays so.
            else out.values_pseudonymised += await this.redis.replaceHashValueV1(f.key, field, value, rewrite(value));
          }
          break;
        }
        case 'set': out.entries_removed += await this.redis.srem(f.key, ...f.entries); break;
        case 'zset': out.entries_removed += await this.redis.zrem(f.key, ...f.entries); break;
        case 'list': for (const e of f.entries) out.entries_removed += await this.redis.lrem(f.key, 0, e); break;
        case 'stream': out.entries_removed += await this.redis.xdel(f.key, ...f.entries.map((e) => e.slice(0, e.indexOf(' ')))); break;
        case 'string': {
          // A string that mentions the subject (a session reference "<hotspot> <mac>", a page outcome) is about them.
          out.keys_deleted += await this.redis.del(f.key);
          break;
        }
        default: break;
      }
    }
    return out;
  }

  private async inspect(key: string, names: (text: string) => boolean, held: boolean): Promise<RedisFinding | null> {
    const type = await this.redis.type(key);
    const whole = names(key);
    const entries: string[] = [];
    switch (type) {
      case 'string': {
        const v = await this.redis.get(key);
        if (v !== null && names(v)) entries.push(v);
        break;
      }
      case 'hash': {
        let c = '0';
        do {
          const [n, flat] = await this.redis.hscan(key, c, 'COUNT', PAGE);
          c = n;
          for (let i = 0; i + 1 < flat.length; i += 2) {
            const e = `${flat[i]}=${flat[i + 1]}`;
            if (names(e)) entries.push(e);
          }
        } while (c !== '0');
        break;
      }
      case 'set': {
        let c = '0';
        do {
          const [n, members] = await this.redis.sscan(key, c, 'COUNT', PAGE);
          c = n;
          for (const m of members) if (names(m)) entries.push(m);
        } while (c !== '0');
        break;
      }
      case 'zset': {
        let c = '0';
        do {
          const [n, flat] = await this.redis.zscan(key, c, 'COUNT', PAGE);
          c = n;
          for (let i = 0; i < flat.length; i += 2) if (names(flat[i]!)) entries.push(flat[i]!);
        } while (c !== '0');
        break;
      }
      case 'list': {
        const len = await this.redis.llen(key);
        for (let i = 0; i < len; i += PAGE) {
          for (const item of await this.redis.lrange(key, i, i + PAGE - 1)) if (names(item)) entries.push(item);
        }
        break;
      }
      case 'stream': {
        let start = '-';
        for (;;) {
          const page = await this.redis.xrange(key, start, '+', 'COUNT', PAGE);
          for (const [id, fields] of page) {
            const text = JSON.stringify(fields);
            if (names(text)) entries.push(`${id} ${text}`);
          }
          if (page.length < PAGE) break;
          start = `(${page[page.length - 1]![0]}`;
        }
        break;
      }
      default: break;
    }
    if (!whole && entries.length === 0) return null;
    return { key, type, whole, entries, held };
  }
}
