import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import { keys } from '../redis/keys.js';
import { IdentityMethod, type Started, type TermsSource } from '../signin/identity-method.js';
import type { SignInContext, SignInMethod, StartedSession, StartOutcome } from '../signin/method.js';
import { GUESS_REFUSAL_WINDOW_MS, type GuessingLimitsSource } from '../signin/voucher-method.js';
import type { PmsGuest } from './pms-adapter.js';
import { endOrQueue, type EndSession } from './pms-ends.js';
import type { PmsGuestStore, PmsLinkState } from './pms-guest-store.js';

/** What the guest typed; `match` is what limit() found for start() to use. */
export interface RoomClaim {
  room: string;
  surname: string;
  match?: PmsGuest;
}

/** The rule of docs/pms.md, "When room sign-in answers pms_unavailable". */
export function listTrusted(s: PmsLinkState, now: number, staleAfterMs: number): boolean {
  return s.up && s.syncedAt > 0 && !s.resyncing && now - s.aliveAt <= staleAfterMs;
}

/** The user name a room sign-in's session and audit records carry: the room, never the surname. */
export const roomUsername = (room: string): string => `room:${room}`;

/**
 * Room sign-in, as a method of the shared pipeline. limit(): the hotspot has
 * a link, its in-house list is trusted (else 503 pms_unavailable), then the
 * guessing limits take this attempt's place (reserve-pms-guess-3.lua) before
 * the list is read, so room and surname cannot be enumerated faster than a
 * voucher code; a match gives the place back. start(): the method-neutral
 * session start (IdentityMethod, method `pms`, user `room:<RN>`), then the
 * session tied to its reservation, so the reservation's check-out ends it.
 */
export class PmsMethod implements SignInMethod<RoomClaim, StartedSession, Started> {
  readonly name = 'pms' as const;
  static readonly METRIC = 'pms_verify_total';
  private readonly identity: IdentityMethod;

  constructor(
    private readonly redis: Redis,
    private readonly guests: PmsGuestStore,
    /** PmsLinks.linkOf: the link as this process's last scan knows it. */
    private readonly linkOf: (hotspotId: string) => 'enabled' | 'disabled' | 'unknown',
    private readonly limits: GuessingLimitsSource,
    terms: TermsSource,
    defaults: { sessionMinutes: number; idleSec: number },
    private readonly staleAfterMs: number,
    private readonly endSession: EndSession,
    private readonly metrics: Metrics,
  ) {
    this.identity = new IdentityMethod(redis, terms, defaults, 'pms');
    metrics.counter(PmsMethod.METRIC, 'Room sign-ins by outcome', 'result');
  }

  async limit(ctx: SignInContext, input: RoomClaim): Promise<void> {
    const t = ctx.tenantId;
    const hs = ctx.hotspot.id;
    const known = this.linkOf(hs);
    if (known === 'disabled') throw Errors.METHOD_NOT_ALLOWED_HERE('room number');
    let state: PmsLinkState;
    try {
      state = await this.guests.state(t, hs);
    } catch (err) {
      throw Errors.SERVICE_UNAVAILABLE('Guest list').withCause(err);
    }
    // A link set since this process's last scan is known by its state in Redis (its holder wrote it).
    if (known === 'unknown' && state.aliveAt === 0 && state.syncedAt === 0) throw Errors.METHOD_NOT_ALLOWED_HERE('room number');
    if (!listTrusted(state, ctx.now, this.staleAfterMs)) {
      this.metrics.inc(PmsMethod.METRIC, 'unavailable');
      throw Errors.PMS_UNAVAILABLE();
    }
    const g = await this.limits.guessing(t);
    const member = newId('pg_');
    const perAddress = ctx.source ? g.per_address : 0;
    const deviceKey = keys.pmsGuessesByDevice(t, hs, ctx.mac);
    const addressKey = keys.pmsGuessesByAddress(t, ctx.source);
    const a = await this.redis.reservePmsGuessV1(deviceKey, addressKey, keys.guessRefusals(t, Math.floor(ctx.now / GUESS_REFUSAL_WINDOW_MS)),
      ctx.now, g.window_sec * 1000, g.per_device, perAddress, member, hs, 2 * GUESS_REFUSAL_WINDOW_MS);
    if (a[0] === 'too_many_attempts') {
      this.metrics.inc(PmsMethod.METRIC, 'too_many_attempts');
      throw Errors.TOO_MANY_ATTEMPTS(Math.max(1, Math.ceil(Number(a[1]) / 1000)));
    }
    const found = await this.guests.find(t, hs, input.room, input.surname);
    if (!found) {
      this.metrics.inc(PmsMethod.METRIC, 'not_found');
      throw Errors.PMS_GUEST_NOT_FOUND();
    }
    // A match is no guess: its place in the windows is given back.
    await this.redis.multi().zrem(deviceKey, member).zrem(addressKey, member).exec();
    input.match = found;
  }

  async start(ctx: SignInContext, input: RoomClaim): Promise<StartOutcome> {
    const g = input.match;
    if (!g) throw Errors.INTERNAL();
    const out = await this.identity.start(ctx, { method: 'pms', username: roomUsername(g.room) });
    if (out.kind !== 'started') return out;
    if (!await this.guests.attach(ctx.tenantId, ctx.hotspot.id, g.reservation, out.session.sessionId)) {
      // Checked out between the match and now: the session the check-out could not see ends here,
      // or, when the hotspot's actor is another process's, by that process from the end queue.
      await endOrQueue(this.redis, this.endSession, ctx.tenantId, ctx.hotspot.id, [out.session.sessionId]);
      return { kind: 'refused', answer: 'checked_out', error: Errors.PMS_GUEST_NOT_FOUND() };
    }
    return out;
  }

  settled(outcome: StartOutcome): void {
    this.metrics.inc(PmsMethod.METRIC, outcome.kind === 'started' ? 'ok' : outcome.kind === 'refused' ? outcome.answer : 'not_loaded');
  }

  answer(ctx: SignInContext, s: StartedSession): Started {
    return this.identity.answer(ctx, s);
  }
}
