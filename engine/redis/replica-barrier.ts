import type { Redis } from 'ioredis';
import { isCluster, nodeFor, type RedisClient } from './redis-client.js';

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
 * the confirmation: ioredis sends the WAIT again on the next connection,
 * which wrote nothing, so Redis answers it at once with every connected
 * replica counted. Any connection of the client closing in that time counts
 * (a few guests of that moment are told to retry; their retry finds the
 * session).
 * Not covered (docs/scale.md): a script that followed an ASK (a slot being
 * moved) ran on the importing master while the WAIT goes to the one the
 * slot map still names, which took none of its writes and answers at once;
 * the same if the slot map changed between the script's answer and the WAIT.
 */
export class ReplicaBarrier {
  private readonly next = new Map<Redis, Promise<boolean>>();
  /** Connections of the client (on a cluster, of any of its nodes) closed so far. */
  private closes = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {
    const count = (node: Redis): void => { node.on('close', () => { this.closes++; }); };
    if (isCluster(redis)) {
      for (const node of redis.nodes()) count(node);
      redis.on('+node', count);
    } else {
      count(redis);
    }
  }

  /**
   * True once `replicas` replicas hold every write sent before the call on the
   * connection that serves `slotKey` (any key of the sign-in's tenant); false on
   * a time-out, an error, or a connection of the client closed meanwhile.
   */
  async confirm(slotKey: string): Promise<boolean> {
    const closes = this.closes;
    let node: Redis;
    try {
      node = await nodeFor(this.redis, slotKey);
    } catch {
      return false;
    }
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
    return (await pending) && this.closes === closes;
  }
}
