import type { RedisClient as Redis } from './redis-client.js';

/**
 * Closes Redis's durability window for sign-ins (REDIS_WAIT_REPLICAS): before
 * a guest is told they are in, the writes of their sign-in script (the use,
 * the grant, the session-start outbox record) are acknowledged by `replicas`
 * replicas through Redis's WAIT. A Redis machine that dies then loses no
 * authorised guest's start record: its replica, promoted, has it.
 *
 * WAIT counts the writes of the connection it is sent on, and it holds that
 * connection until it answers, so the sign-ins of one turn of the event loop
 * share one WAIT sent on the sign-in connection after their scripts: every
 * caller's script was answered before it asked, so it was sent before the
 * WAIT and is covered by it. One WAIT a turn keeps a storm's sign-ins from
 * queueing one replication round trip each behind each other.
 */
export class ReplicaBarrier {
  private next: Promise<boolean> | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {}

  /** True once `replicas` replicas hold every write this connection sent before the call; false on a time-out or an error. */
  confirm(): Promise<boolean> {
    if (!this.next) {
      this.next = new Promise<boolean>((resolve) => {
        setImmediate(() => {
          this.next = null;
          this.redis.wait(this.replicas, this.timeoutMs).then(
            (acked) => resolve(acked >= this.replicas),
            () => resolve(false),
          );
        });
      });
    }
    return this.next;
  }
}
