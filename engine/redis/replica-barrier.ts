import type { Redis } from 'ioredis';
import { nodeFor, type RedisClient } from './redis-client.js';

/**
 * Closes Redis's durability window for sign-ins (REDIS_WAIT_REPLICAS): before
 * a guest is told they are in, the writes of their sign-in script (the use,
 * the grant, the session-start outbox record) are acknowledged by `replicas`
 * replicas through Redis's WAIT. A Redis machine that dies then loses no
 * authorised guest's start record: its replica, promoted, has it.
 *
 * WAIT counts the writes of the connection it is sent on, and it holds that
 * connection until it answers, so the sign-ins of one turn of the event loop
 * share one WAIT sent on the connection their scripts went on, after them:
 * every caller's script was answered before it asked, so it was sent before
 * the WAIT and is covered by it. One WAIT a turn keeps a storm's sign-ins
 * from queueing one replication round trip each behind each other.
 *
 * On a Redis Cluster that connection is the one to the master serving the
 * tenant's slot (every key of a sign-in carries the tenant's hash tag, so
 * one master took all its writes): one WAIT a turn per master that was
 * written to. A script that followed a MOVED went to the master ioredis now
 * knows for the slot, which is where the WAIT goes too; a master just
 * promoted by a fail-over has no replica in sync yet, so its guests wait
 * until one is (or are told to retry, as when a replica does not answer).
 * A connection lost between a script's answer and its WAIT's answer voids
 * the confirmation: on one server ioredis reconnects and sends the WAIT
 * (queued, or in flight) on the new connection, which wrote nothing, so
 * Redis may answer it at once with every connected replica counted. The
 * guests of that moment are told to retry; their retry finds the session.
 * (A cluster's node connection is not reconnected: its WAIT is refused.)
 * Not covered (docs/scale.md): a script that followed an ASK (a slot being
 * moved) ran on the importing master while the WAIT goes to the one the
 * slot map still names, which took none of its writes and answers at once;
 * the same if the slot map changed between the script's answer and the WAIT.
 */
export class ReplicaBarrier {
  private readonly next = new Map<Redis, Promise<boolean>>();
  /** How often each node's connection has closed since its first confirm here. */
  private readonly closes = new WeakMap<Redis, { n: number }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {}

  /**
   * True once `replicas` replicas hold every write sent before the call on the
   * connection that serves `slotKey` (any key of the sign-in's tenant); false on
   * a time-out, an error, or that connection closed meanwhile.
   */
  async confirm(slotKey: string): Promise<boolean> {
    let node: Redis;
    try {
      node = await nodeFor(this.redis, slotKey);
    } catch {
      return false;
    }
    // Read before any I/O can run (on one server nodeFor does none): the script that just answered wrote on the connection open now.
    const closed = this.closesOf(node);
    const seen = closed.n;
    let pending = this.next.get(node);
    if (!pending) {
      pending = new Promise<boolean>((resolve) => {
        setImmediate(() => {
          this.next.delete(node);
          node.wait(this.replicas, this.timeoutMs).then(
            (acked) => resolve(acked >= this.replicas),
            () => resolve(false),
          );
        });
      });
      this.next.set(node, pending);
    }
    return (await pending) && closed.n === seen;
  }

  private closesOf(node: Redis): { n: number } {
    let closed = this.closes.get(node);
    if (!closed) {
      const counter = { n: 0 };
      node.on('close', () => { counter.n++; });
      this.closes.set(node, (closed = counter));
    }
    return closed;
  }
}
