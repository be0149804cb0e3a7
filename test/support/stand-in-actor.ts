import type { HostedActor } from '../../engine/sessions/actor-host.js';
import type { ActorContext } from '../../engine/sessions/hotspot-actor.js';
import type { AuthMsg } from '../../engine/sessions/messages.js';
import type { AccessDecision } from '../../engine/sessions/ports.js';

/** What a stand-in's auth answers unless the test says otherwise. */
export const STAND_IN_REJECT: AccessDecision = { accept: false, reason: 'stand-in' };

/**
 * An actor for the actor host's tests (ActorHost without a thread): counts its
 * loads and releases; its auth does what the test sets in `authWith` (a reject
 * unless told); the rest answers as an actor with no sessions.
 */
export class StandInActor implements HostedActor {
  size = 0;
  loads = 0;
  releases = 0;
  authWith: (m: AuthMsg, ctx: ActorContext) => Promise<AccessDecision> = async () => STAND_IN_REJECT;
  constructor(readonly tenant: string, readonly hs: string, readonly ctx: ActorContext) {}
  async load(): Promise<void> { this.loads++; }
  release(): void { this.releases++; }
  async sweep(): Promise<void> {}
  auth(m: AuthMsg): Promise<AccessDecision> { return this.authWith(m, this.ctx); }
  async acct(): Promise<void> {}
  async started(): Promise<void> {}
  async disconnect(): Promise<{ ended: boolean; atMs: number }> { return { ended: false, atMs: 0 }; }
  async extend(): Promise<{ untilMs: number } | null> { return null; }
  async live(): Promise<null> { return null; }
}
