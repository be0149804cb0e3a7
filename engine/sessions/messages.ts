import type { AccessDecision, AcctStatus, NasCommandResult, StopReason } from './ports.js';

/**
 * Messages between the main thread and the actor threads: a typed union,
 * sent in batches (message-codec.ts). Every request carries `id`; the
 * thread answers each with exactly one Reply.
 */

/** Which actor a message is for. The timezone decides the "day" of daily quotas. */
interface ToActor {
  tenant: string;
  hs: string;
  tz: string;
}

export interface AuthMsg extends ToActor {
  t: 'auth';
  id: number;
  nasId: string;
  mac: string;
  userName: string;
  ip?: string;
  ssid?: string;
  /** Reached another process first, which forwarded it (ActorForwarder): not a sign this process serves the NAS. */
  forwarded?: boolean;
}

export interface AcctMsg extends ToActor {
  t: 'acct';
  id: number;
  nasId: string;
  status: AcctStatus;
  mac: string;
  userName: string;
  acctSessionId: string;
  inOctets: number;
  outOctets: number;
  ip?: string;
  /** The SSID the NAS names (Called-Station-Id): the session's, from now on. */
  ssid?: string;
  apName?: string;
  signal?: number;
  /** On a Stop: why the NAS ended the session, translated by radius/; absent: the guest's own stop. */
  reason?: StopReason;
  /** Acct-Delay-Time, seconds: how long before now the NAS saw the event. */
  delay?: number;
  /** Reached another process first, which forwarded it (ActorForwarder): not a sign this process serves the NAS. */
  forwarded?: boolean;
}

/** A session started outside the actor (portal verify): take it under watch. */
export interface StartedMsg extends ToActor {
  t: 'started';
  id: number;
  sid: string;
  mac: string;
  /** A session this one replaced at the same hotspot, to be ended; '' for none. */
  replaced: string;
  /**
   * Send the hotspot's NAS a CoA naming the device (MAC authentication): a NAS
   * that holds a walled-garden session for it re-authorises it at once.
   */
  coa?: boolean;
}

export interface DisconnectMsg extends ToActor {
  t: 'disconnect';
  id: number;
  sid: string;
  /** pms_checkout: the guest's reservation checked out (engine/pms/). */
  reason: 'admin_disconnect' | 'blocked' | 'pms_checkout';
  by: string;
}

export interface ExtendMsg extends ToActor {
  t: 'extend';
  id: number;
  sid: string;
  minutes: number;
  by: string;
}

export interface LiveMsg extends ToActor {
  t: 'live';
  id: number;
  sid: string;
}

/**
 * Make sure the hotspot's actor exists (so its clock and sweep run); it loads
 * its sessions from Redis. Answered with how many live sessions it holds.
 */
export interface WakeMsg extends ToActor {
  t: 'wake';
  id: number;
}

export type Request = AuthMsg | AcctMsg | StartedMsg | DisconnectMsg | ExtendMsg | LiveMsg | WakeMsg;

/** Live figures of a session, as the actor knows them. */
export interface LiveView {
  sid: string;
  mac: string;
  ip: string;
  ssid: string;
  apName: string;
  signal: number | null;
  bytesIn: number;
  bytesOut: number;
  untilMs: number;
  startedMs: number;
  lastMs: number;
}

export type ReplyValue =
  | AccessDecision
  | { done: true }
  | { sessions: number }
  | { ended: boolean; atMs: number }
  | { untilMs: number }
  | LiveView
  | null;

export interface Reply {
  t: 'reply';
  id: number;
  ok: boolean;
  value?: ReplyValue;
  /** When !ok: an error code from the catalogue and its HTTP status. */
  code?: string;
  status?: number;
  message?: string;
}

/** The thread asks the main thread to send a Disconnect or CoA to a NAS. */
export interface NasCommand {
  t: 'nas';
  id: number;
  tenant: string;
  hs: string;
  nasId: string;
  command: 'disconnect' | 'coa';
  userName: string;
  mac: string;
  acctSessionId: string;
  ip: string;
  sessionTimeout: number;
}

export interface NasResultMsg {
  t: 'nas_result';
  id: number;
  result: NasCommandResult;
}

/** Periodic counts from a thread. */
export interface ThreadStats {
  t: 'stats';
  sessions: number;
  actors: number;
}

/** Outside the batches, at a graceful stop: the main thread asks a thread to give its leases up; it answers LEASES_RELEASED. */
export const RELEASE_LEASES = { t: 'release_leases' } as const;
export const LEASES_RELEASED = 'leases_released';

export type FromThread = Reply | NasCommand | ThreadStats;
export type ToThread = Request | NasResultMsg;
