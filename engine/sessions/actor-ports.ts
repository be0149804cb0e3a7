import type { NasCommand, ReplyValue, Request } from './messages.js';
import type { AccessDecision, NasCommandResult } from './ports.js';
import type { MirrorShare } from './mirror-view.js';

/**
 * What services need from the hotspot actors, and what the actors need from
 * the RADIUS side: the ports between them, so that SessionService,
 * SignInService and RadiusGateway depend on these and not on ActorPool (a
 * test or a process without actor threads plugs in something else).
 *
 * Beside ports.ts rather than in it: these speak the thread protocol
 * (messages.ts), which itself uses ports.ts's types, and the architecture
 * check allows no import cycle.
 */

/** Distributes a request type over the union without its id. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** A message for a hotspot's actor; the pool gives it its id. */
export type ActorRequest = WithoutId<Request>;

/** The hotspot actors as services see them. */
export interface SessionActors {
  /** Sends a request to the hotspot's actor; resolves with its answer, rejects with a catalogue error. */
  request<V extends ReplyValue>(msg: ActorRequest): Promise<V>;
  /** Makes sure the hotspot's actor runs (its clock and sweep); cheap enough to call on every sign-in. */
  wake(tenant: string, hs: string, tz: string): void;
  /** Live sessions held in actor memory, as last reported. */
  readonly liveSessions: number;
}

/** The actors' published accepts, read on the main thread (AuthMirrorReader). */
export interface AcceptMirror {
  /** The accept an actor gave this device through this NAS on this SSID ('' none named) while it still holds; null: ask the actor. */
  mirroredAccept(tenant: string, hs: string, mac: string, nasId: string, userName: string, ssid: string): AccessDecision | null;
}

/** The auth mirror's shared memory, for RADIUS threads that answer from it themselves (radius/radius-threads.ts). */
export interface MirrorSource {
  /** Calls `listener` with the shared memory now and after every change of it. */
  shareMirror(listener: (share: MirrorShare) => void): void;
}

/** What the actors need from the RADIUS side: a Disconnect or CoA sent to a NAS. */
export interface NasCommandPort {
  nasCommand(cmd: NasCommand): Promise<NasCommandResult>;
}

/** For processes without actor threads (the CLI): any session request fails clearly, nothing is mirrored. */
export class DisabledActors implements SessionActors, AcceptMirror {
  readonly liveSessions = 0;

  request<V extends ReplyValue>(_msg: ActorRequest): Promise<V> {
    return Promise.reject(new Error('session engine not running in this process'));
  }

  wake(_tenant: string, _hs: string, _tz: string): void {}

  mirroredAccept(): AccessDecision | null {
    return null;
  }
}
