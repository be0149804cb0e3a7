import type { DeviceType } from '../reports/device-type.js';
import type { AppError } from '../errors.js';
import type { HotspotRef } from '../hotspots/hotspot-service.js';
import type { AuthMethod } from '../redis/records.js';

export type { AuthMethod } from '../redis/records.js';

/** What every sign-in names, whatever the method: where, and which device. */
export interface SignInRequest {
  hotspotId: string;
  /** As the guest or the NAS gave it; the pipeline normalises it. */
  mac: string;
  /** The guest's address as reported (gateway or NAS): recorded with the session, never a limit's key. */
  ip: string;
  ssid: string;
  /**
   * The source address of the request (the HTTP client as http/client-address.ts
   * resolves it): a fact, what per-address limits key on. Absent for a NAS's request.
   */
  source?: string;
  /** The NAS itself asked (a code in an Access-Request): it learns of the session from its answer, so no CoA. */
  viaNas?: boolean;
  /**
   * The hotspot `hotspotId` names, when the caller has looked it up already
   * (the portal sign-in does, once): the pipeline uses it instead of looking
   * it up again. Absent (RADIUS): the pipeline looks it up.
   */
  hotspot?: HotspotRef;
  /**
   * The device type the guest's browser claimed (engine/reports/device-type.ts):
   * a statistic for the reports and nothing else. Absent (RADIUS, no browser): `other`.
   */
  device?: DeviceType;
}

/** What the pipeline has settled when it hands over to a method. */
export interface SignInContext {
  hotspot: HotspotRef;
  tenantId: string;
  /** Canonical MAC (normalizeMac). */
  mac: string;
  ip: string;
  ssid: string;
  /** SignInRequest.source, '' when none. */
  source: string;
  /** A code a NAS sent in an Access-Request (SignInRequest.viaNas). */
  viaNas: boolean;
  /** The clock's reading for this sign-in, ms. */
  now: number;
  /** SignInRequest.device, `other` when none: carried with the session start to the reports. */
  device: DeviceType;
}

/** A session's terms: its length, bandwidth and quotas. 0 or '' means none (the idle time-out: the service default). */
export interface SessionTerms {
  minutes: number;
  idleSec: number;
  downKbps: number;
  upKbps: number;
  /** Daily quota, MB. */
  quotaMb: number;
  /** Session quota, MB, download and upload together. */
  sessionQuotaMb: number;
  profile: string;
}

/** A session the method's atomic step started, or gave back. */
export interface StartedSession {
  sessionId: string;
  untilMs: number;
  /** True when the device got its live session back (no new session, nothing for the actor). */
  reused: boolean;
  /** A live session of the same device at the same hotspot that the new one replaced (ended in the same script), or ''. */
  replaced: string;
  /**
   * The method the session started with, when the atomic step found it out
   * itself (a phone code learns there whether it went by SMS or messaging
   * app); unset: the method's name. The accept decision carries it.
   */
  method?: AuthMethod;
}

/**
 * What a method's atomic step answered. `not_loaded`: the Redis server may
 * not hold the tenant's vouchers and blocks (lua/includes/admit-device.lua);
 * the pipeline loads them and runs the step once more. `refused`: the
 * method's own check (or the block check) said no: `answer` is the script's
 * word for it, the error what the guest is told (its code is the decision's
 * reason).
 */
export type StartOutcome<S extends StartedSession = StartedSession> =
  | { kind: 'started'; session: S }
  | { kind: 'not_loaded'; runId: string }
  | { kind: 'refused'; answer: string; error: AppError };

/**
 * One way in (a voucher, an OTP code, later a sponsor or a hotel room),
 * behind which the pipeline runs the steps every method shares
 * (sign-in-pipeline.ts). A method adds a file implementing this.
 *
 * `In` is what the guest presented for this method, `S` what its start
 * answers (StartedSession plus anything its answer needs), `Out` the answer.
 */
export interface SignInMethod<In, S extends StartedSession, Out> {
  readonly name: AuthMethod;
  /**
   * Rate limits before anything is checked; throws an AppError to refuse
   * (recorded as a rejection with the error's code). Optional: a voucher's guessing limits are part of its atomic step instead.
   */
  limit?(ctx: SignInContext, input: In): Promise<void>;
  /**
   * The method's own check and the session start as ONE atomic step (a Lua
   * script including lua/includes/session-start.lua), so no guest is
   * authorised unless its session-start record is queued. The block check is
   * part of that step (lua/includes/admit-device.lua). Called again after a
   * `not_loaded`, with the same context; each call starts a fresh session id.
   */
  start(ctx: SignInContext, input: In): Promise<StartOutcome<S>>;
  /** The guest's answer. */
  answer(ctx: SignInContext, session: S): Out;
  /** Told the final outcome of the atomic step (after any load and retry), for the method's own metrics. */
  settled?(outcome: StartOutcome<S>): void;
}
