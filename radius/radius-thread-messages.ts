import type { AccessDecision, AccessRequestMsg, AccountingMsg, MetricsSnapshot, MirrorShare, MirroredAnswers, NasRow } from '../engine/index.js';
import type { RadiusServerStats } from './radius-server-options.js';

/** What a RADIUS thread starts with (radius-thread.ts). */
export interface RadiusThreadData {
  index: number;
  host: string;
  /** The ports to bind; the first thread may be given 0 (a free one), the others get what it bound. */
  authPort: number;
  acctPort: number;
  logLevel: string;
  dictionaryDir: string | undefined;
  /** This thread's share of the requests the main thread may have waiting for the engine. */
  maxInFlight: number;
}

/** A decoded request for the engine: [id, 0 Access-Request | 1 Accounting-Request, the message]. Batched, msgpackr. */
export type RequestItem = [number, 0 | 1, AccessRequestMsg | AccountingMsg];
/** The engine's answer: [id, 1 and the decision (null for accounting) | 0 failed (the packet is dropped)]. */
export type ReplyItem = [number, 0 | 1, AccessDecision | null];

/** Plain messages to a RADIUS thread (the replies travel as msgpackr batches of ReplyItem). */
export type ToRadiusThread =
  /** Bind the ports (rows first: no packet is matched against an empty registry); the auth mirror, if the engine has one. */
  | { t: 'start'; rows: readonly NasRow[]; mirror: MirrorShare | null }
  /** The auth mirror's shared memory changed (an actor thread's table handed over or dropped). */
  | { t: 'mirror'; share: MirrorShare }
  /** The registry changed (a NAS added, changed or removed). */
  | { t: 'nas'; rows: readonly NasRow[] }
  /** Close the sockets and say so. */
  | { t: 'stop' };

/** Plain messages from a RADIUS thread (the requests travel as msgpackr batches of RequestItem). */
export type FromRadiusThread =
  | { t: 'bound'; auth: number; acct: number }
  | { t: 'bind_failed'; message: string }
  | { t: 'closed' }
  | { t: 'report'; snapshot: MetricsSnapshot; stats: RadiusServerStats }
  /** Access-Requests the thread answered from the auth mirror since its last such message. */
  | { t: 'mirrored'; answers: MirroredAnswers[] };
