import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type ChainableCommander, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * The engine's one Redis client type: a connection to one server (or a
 * replica set's primary), or an ioredis Cluster over a Redis Cluster's
 * masters. Both carry the same commands and the scripts of scripts.ts
 * (defineCommand works alike on both); what differs is said where it matters:
 * a multi-key command or a pipeline must stay in one slot on a cluster
 * (groupBySlot, execPerSlot), and a command without a key goes to any node
 * there (nodeFor picks the one that serves a key).
 */
export type RedisClient = Redis | Cluster;

/** REDIS_URL schemes that name a cluster's seed nodes: `redis+cluster://[user:password@]host:port[,host:port...]`. */
export const CLUSTER_SCHEMES = ['redis+cluster:', 'rediss+cluster:'] as const;

/** A REDIS_URL that names a cluster, taken apart. */
export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/** Whether a REDIS_URL names a cluster (its scheme is one of CLUSTER_SCHEMES). */
export function isClusterUrl(url: string): boolean {
  return CLUSTER_SCHEMES.some((s) => url.toLowerCase().startsWith(`${s}//`));
}

/**
 * The seed nodes and credentials of `redis+cluster://[user:password@]host:port[,host:port...]`
 * (`rediss+cluster://` for TLS). WHATWG's URL cannot read a list of hosts,
 * hence this parser. Any one reachable seed is enough: ioredis asks it for
 * the cluster's slots and connects to every master it names. Throws a
 * one-line reason on a malformed value (config.ts shows it).
 */
export function parseClusterUrl(url: string): ClusterTarget {
  const scheme = CLUSTER_SCHEMES.find((s) => url.toLowerCase().startsWith(`${s}//`));
  if (!scheme) throw new Error(`must start with ${CLUSTER_SCHEMES.map((s) => `${s}//`).join(' or ')}`);
  let rest = url.slice(scheme.length + 2);
  if (/[/?#]/.test(rest.replace(/\/+$/, ''))) throw new Error('takes no path, query or fragment: only [user:password@]host:port[,host:port...]');
  rest = rest.replace(/\/+$/, '');
  const at = rest.lastIndexOf('@');
  const target: ClusterTarget = { nodes: [], tls: scheme === 'rediss+cluster:' };
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.indexOf(':');
    const user = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : auth);
    const password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) : '';
    if (colon < 0) target.password = user; // redis://secret@host: the password alone, as ioredis reads a URL
    else {
      if (user) target.username = user;
      if (password) target.password = password;
    }
  }
  for (const part of rest.split(',')) {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(part.trim());
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) throw new Error(`has a seed node ${JSON.stringify(part)} that is not host:port`);
    target.nodes.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return target;
}

/**
 * How long a command on a cluster keeps being retried through a master
 * fail-over (its connection closed by the dead master, then CLUSTERDOWN until
 * a replica is elected, then MOVED) or a slot move (TRYAGAIN) before its
 * caller gets the error: a guest waiting 3 s beats a 503. The fail-over
 * itself takes the cluster's cluster-node-timeout plus the election (about
 * 1 s): docs/scale.md says what to set it to.
 */
export const CLUSTER_RIDE_THROUGH_MS = 3_000;
/** Redirections a command may take within CLUSTER_RIDE_THROUGH_MS: MOVED and ASK are followed at once, the rest every 100 ms. */
const CLUSTER_MAX_REDIRECTIONS = 100;

/**
 * An ioredis Cluster whose retries are bounded by time (CLUSTER_RIDE_THROUGH_MS
 * since a command's first error) rather than by their count alone: during a
 * fail-over each 100 ms retry also costs a MOVED to the dead master and a
 * refused connection there, so a count says little about the wait.
 * What is retried is ioredis's choice, unchanged: CLUSTERDOWN, TRYAGAIN, MOVED
 * and ASK (the node refused the command: it did not run), and "Connection is
 * closed" (the command was queued for, or in flight to, a master that died: it
 * may have run there). Only the last may repeat a script that ran; the sign-in
 * scripts are safe to repeat for one device (docs/scale.md, "A master fail-over").
 */
class RideThroughCluster extends Cluster {
  override handleError(error: Error, ttl: { value?: unknown; since?: number }, handlers: unknown): void {
    const since = ttl.since ?? Date.now();
    ttl.since = since;
    // ioredis gives up when its count falls to 0 (it subtracts one first): past the deadline, make it so.
    if (Date.now() - since > CLUSTER_RIDE_THROUGH_MS && typeof ttl.value === 'number') ttl.value = 1;
    super.handleError(error, ttl, handlers);
  }
}

/**
 * Makes one connection send the commands of a turn of the event loop to its
 * socket in one write: the socket is corked at the turn's first command and
 * uncorked on setImmediate, when Node writes what it holds with one writev.
 * That is what ioredis's auto-pipelining does for the socket, without its
 * cost: it builds a Pipeline per turn, and a Pipeline's constructor copies
 * every defined command and script onto itself (two properties per script;
 * this engine defines about forty). At a few commands a turn, the common case
 * below a few thousand requests a second, that was a Pipeline per command: the
 * largest allocation of an actor thread (39 % of its bytes in a storm at 100
 * guests a second, bench/results/stadium-storm.md) and garbage collection
 * pauses on every thread that talks to Redis. The commands, their order, their
 * replies and a cluster's redirections are ioredis's own, one by one: only
 * when the bytes reach the socket changes. Applied once per connection (a
 * cluster's node connections as ioredis makes them).
 */
function batchTurns(redis: Redis): void {
  if (batched.has(redis)) return;
  batched.add(redis);
  let corked: Redis['stream'] | null = null;
  const uncork = (): void => {
    const s = corked;
    corked = null;
    s?.uncork();
  };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    const s = redis.stream;
    // Only the connection's own socket, when it takes writes; the offline queue and a Pipeline's buffer are ioredis's.
    if (stream === undefined && corked === null && redis.status === 'ready' && s?.writable) {
      s.cork();
      corked = s;
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}
const batched = new WeakSet<Redis>();

/**
 * Opens the client REDIS_URL names: a Cluster for `redis+cluster://`, else
 * one connection; every connection sends a turn's commands in one write
 * (batchTurns). `options` are each connection's (a cluster's node connections
 * get them as redisOptions); ioredis's auto-pipelining is never used (see
 * batchTurns, and below for a cluster). MOVED and ASK are followed by
 * ioredis (refreshing its slot map on MOVED); CLUSTERDOWN, TRYAGAIN and a
 * connection closed by a dead master are retried every 100 ms; all of it for
 * at most CLUSTER_RIDE_THROUGH_MS a command (and 100 redirections).
 */
export function openRedis(url: string, options: RedisOptions = {}): RedisClient {
  const { enableAutoPipelining: _pipelines, ...nodeOptions } = options;
  if (!isClusterUrl(url)) {
    const redis = new Redis(url, nodeOptions);
    batchTurns(redis);
    return redis;
  }
  // Never ioredis's auto-pipelining on a cluster: it batches the commands of several slots of one
  // node, and redirects a batch (MOVED, ASK, TRYAGAIN) only when every command in it got the same answer
  // and the others were read-only; a sign-in's script batched with another tenant's write would get
  // the redirection as its error (seen in redis-cluster-moved.test.ts). batchTurns only merges the
  // writes: each command is still sent, answered and redirected on its own.
  const t = parseClusterUrl(url);
  const clusterOptions: ClusterOptions = {
    enableAutoPipelining: false,
    // Every command at the master of its slot: the engine reads what it just wrote (a replica may lag).
    scaleReads: 'master',
    maxRedirections: CLUSTER_MAX_REDIRECTIONS,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    redisOptions: {
      ...nodeOptions,
      ...(t.username ? { username: t.username } : {}),
      ...(t.password ? { password: t.password } : {}),
      ...(t.tls ? { tls: {} } : {}),
    },
  };
  const cluster = new RideThroughCluster(t.nodes, clusterOptions);
  // Node connections are made once the seed nodes' names resolve (a later turn), each announced here.
  cluster.on('+node', batchTurns);
  return cluster;
}

/** Whether the client is a Cluster. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis.isCluster;
}

/** The cluster slot of a key (its hash tag's, when it has one). */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * The connection to the master that serves `key`'s slot: the client itself
 * on one server. For the keyless commands that must reach the node holding a
 * tenant's keys (INFO's run_id, SCAN of a tenant's keys). On a cluster the
 * answer is a node connection: it does not follow MOVED, so a slot that
 * moves meanwhile makes its caller's command fail or miss (the callers say
 * what that costs them).
 */
export async function nodeFor(redis: RedisClient, key: string): Promise<Redis> {
  if (!isCluster(redis)) return redis;
  const slot = slotOf(key);
  if (!redis.slots[slot]?.length) {
    await redis.ping(); // connects and loads the slot map (a lazy or just-created client has none yet)
    if (!redis.slots[slot]?.length) await new Promise<void>((resolve, reject) => redis.refreshSlotsCache((err) => (err ? reject(err) : resolve())));
  }
  const nodeKey = redis.slots[slot]?.[0];
  const node = redis.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
  if (!node) throw new Error(`no master of the cluster serves slot ${slot} (${nodeKey ?? 'unknown'})`);
  return node;
}

/**
 * Items grouped so that each group's keys share one slot, in their order:
 * on one server a single group (a multi-key command or a pipeline may then
 * span tenants, as it always did); on a cluster one group per slot, for the
 * commands and pipelines that must not (CROSSSLOT; ioredis refuses a
 * pipeline whose keys are not on one node).
 */
export function groupBySlot<T>(redis: RedisClient, items: readonly T[], keyOf: (item: T) => string): T[][] {
  if (!isCluster(redis)) return items.length > 0 ? [[...items]] : [];
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const slot = slotOf(keyOf(item));
    const g = groups.get(slot);
    if (g) g.push(item);
    else groups.set(slot, [item]);
  }
  return [...groups.values()];
}

/** One pipeline reply, as ioredis gives it. */
export type PipelineReply = [error: Error | null, value: unknown];

/**
 * Runs one pipeline on one server, or one pipeline per slot on a cluster
 * (all sent at once: about one round trip), for work that spans tenants. `queue` adds the commands of one
 * item, whose keys must all be in the slot of `keyOf(item)`. Returns each
 * item's replies in the order queued. Like a pipeline it is not atomic across
 * items; on a cluster a pipeline whose slot moved is sent again by ioredis.
 */
export async function execPerSlot<T>(
  redis: RedisClient,
  items: readonly T[],
  keyOf: (item: T) => string,
  queue: (p: ChainableCommander, item: T) => void,
): Promise<PipelineReply[][]> {
  const out: PipelineReply[][] = items.map(() => []);
  await Promise.all(groupBySlot(redis, [...items.keys()], (i) => keyOf(items[i]!)).map(async (group) => {
    const p = redis.pipeline();
    const counts: number[] = [];
    for (const i of group) {
      const before = p.length;
      queue(p, items[i]!);
      counts.push(p.length - before);
    }
    const replies = ((await p.exec()) ?? []) as PipelineReply[];
    let at = 0;
    group.forEach((i, g) => {
      out[i] = replies.slice(at, at + counts[g]!);
      at += counts[g]!;
    });
  }));
  return out;
}
