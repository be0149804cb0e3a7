import { AppError, Errors } from '../errors.js';
import type { NasEntry, NasRegistry } from './nas-registry.js';
import { normalizeMac } from '../ids.js';
import type { Logger } from '../logger.js';
import { timingSafeEqual } from 'node:crypto';
import { chapMatches } from '../signin/chap.js';
import type { DecisionMethod, DecisionSink } from '../signin/decision-sink.js';
import type { SignInService } from '../signin/sign-in-service.js';
import type { AcceptMirror, NasCommandPort, SessionActors } from '../sessions/actor-ports.js';
import type { NasCommand } from '../sessions/messages.js';
import type { AccessDecision, AccessRequestMsg, AccountingMsg, MirroredAnswers, NasCommandResult, NasControl, NasRecord, RadiusHandler } from '../sessions/ports.js';

/**
 * The way back from the actors to the NAS: their Disconnect/CoA requests go
 * to whatever NasControl radius/ plugged in. Built before the actors (which
 * need it) and the gateway (which needs the actors).
 */
export class NasCommandRelay implements NasCommandPort {
  private control: NasControl | null = null;

  constructor(private readonly registry: NasRegistry, private readonly log: Logger) {}

  /** radius/ plugs its CoA client in at start-up (through RadiusGateway.setNasControl). */
  setControl(control: NasControl): void {
    this.control = control;
  }

  /** Runs an actor's Disconnect/CoA through the plugged-in NAS client. */
  async nasCommand(cmd: NasCommand): Promise<NasCommandResult> {
    const nas = (cmd.nasId && this.registry.get(cmd.nasId)) || this.registry.forHotspot(cmd.hs);
    if (!nas || !this.control) {
      this.log.debug({ hotspot: cmd.hs, command: cmd.command }, 'no NAS to send the command to');
      return { outcome: 'timeout' };
    }
    const ref = { nas, userName: cmd.userName, mac: cmd.mac, acctSessionId: cmd.acctSessionId || undefined, framedIp: cmd.ip || undefined };
    return cmd.command === 'disconnect'
      ? this.control.disconnect(ref)
      : this.control.changeAuthorization(ref, { sessionTimeout: cmd.sessionTimeout });
  }
}

/**
 * The one-time user names and passwords the portal hands a UAM gateway after a
 * sign-in (engine/signin/uam-credential.ts): the gateway logs the guest in with
 * them, and the session they name is already started.
 */
export interface OneTimeLogins {
  lookup(tenantId: string, username: string): Promise<{ password: string; mac: string; hotspotId: string } | null>;
  /** Spends it once it has let the device in. */
  consume(tenantId: string, username: string): Promise<void>;
}

const NO_ONE_TIME_LOGINS: OneTimeLogins = { lookup: () => Promise.resolve(null), consume: () => Promise.resolve() };
const NO_DECISIONS: DecisionSink = { record: () => undefined };

/** The dashboard's reason code for each of decide()'s reject texts (engine/sessions/decide.ts). */
const REJECT_CODES: Readonly<Record<string, string>> = {
  'No device address in the request': 'no_device_address',
  'Please sign in on the portal': 'not_signed_in',
  'Daily data quota used up': 'daily_quota',
  'Session data quota used up': 'session_quota',
  'Not allowed on this network': 'ssid_not_allowed',
};

/** The port fields of a request or accounting record (both messages have them). */
export interface NasPortFields {
  nasPort?: number;
  nasPortId?: string;
  calledStationId?: string;
  apName?: string;
}

/**
 * Who spoke and through which port, for the dashboard's switches and
 * topology (engine/nas/nas-presence.ts). Called on every packet:
 * must not await or throw.
 */
export interface NasPresencePort {
  saw(nas: NasRecord, m: NasPortFields): void;
}

const NO_PRESENCE: NasPresencePort = { saw: () => undefined };

/** The engine as the RADIUS server sees it (RadiusHandler). */
export class RadiusGateway implements RadiusHandler {
  constructor(
    private readonly registry: NasRegistry,
    private readonly actors: SessionActors & AcceptMirror,
    private readonly signIn: SignInService,
    private readonly relay: NasCommandRelay,
    private readonly logins: OneTimeLogins = NO_ONE_TIME_LOGINS,
    /** Every answer is a decision for the dashboard (source radius); a voucher redemption's is recorded by the sign-in pipeline. */
    private readonly decisions: DecisionSink = NO_DECISIONS,
    private readonly presence: NasPresencePort = NO_PRESENCE,
    private readonly now: () => number = Date.now,
  ) {}

  /** radius/ plugs its CoA client in here at start-up. */
  setNasControl(control: NasControl): void {
    this.relay.setControl(control);
  }

  nasByIp(ip: string, identifier: () => string | undefined): NasRecord | null {
    return this.registry.byAddress(ip, identifier);
  }

  /**
   * Answered at once (no promise) when the device's accept is mirrored on this thread: the NAS's re-check of a
   * device signed in a moment ago, the hottest RADIUS path. Anything else asks the actor, and a user name with
   * a password or CHAP response that is not the device's MAC is a credential first.
   */
  authorize(m: AccessRequestMsg): AccessDecision | Promise<AccessDecision> {
    const nas = this.registry.get(m.nas.id) ?? { ...m.nas, timezone: 'UTC' };
    // Presence is the registered client's (a subnet client's addresses are one row on the console).
    this.presence.saw(this.registry.client(nas) ?? nas, m);
    const userMac = normalizeMac(m.userName);
    const device = macAuthDevice(m, userMac);
    if (device === null) return this.withCredential(nas, m, userMac);
    return this.decide(nas, m, device, 'mac_auth');
  }

  /** What RADIUS threads answered from the mirror themselves: the same decisions and presence as decide()'s. */
  answeredFromMirror(answers: readonly MirroredAnswers[]): void {
    for (const a of answers) {
      const nas = this.registry.get(a.nasId);
      if (!nas) continue; // removed since: its packets are no longer the tenant's to count
      const client = this.registry.client(nas) ?? nas;
      for (const port of a.ports) this.presence.saw(client, port);
      if (a.ports.length === 0) this.presence.saw(client, {});
      this.decisions.record({ tenantId: nas.tenantId, hotspotId: nas.hotspotId, method: 'mac_auth', outcome: 'accept', reason: '', at: a.at, source: 'radius' }, a.count);
    }
  }

  /**
   * A device the actor accepted a moment ago, through the same NAS: its answer, without the hop to the
   * actor's thread. Otherwise the actor's.
   */
  private decide(nas: NasEntry, m: AccessRequestMsg, mac: string, method: DecisionMethod): AccessDecision | Promise<AccessDecision> {
    if (mac) {
      const mirrored = this.actors.mirroredAccept(nas.tenantId, nas.hotspotId, mac, nas.id, m.userName, m.ssid ?? '');
      if (mirrored) return this.noted(nas, method, '', mirrored);
    }
    return this.fromActor(nas, m, mac, method);
  }

  /** The actor's answer; recorded as a decision unless `method` is null (a redemption's pipeline recorded it). */
  private async fromActor(nas: NasEntry, m: AccessRequestMsg, mac: string, method: DecisionMethod | null): Promise<AccessDecision> {
    const decision = await this.actors.request<AccessDecision>({
      t: 'auth', tenant: nas.tenantId, hs: nas.hotspotId, tz: nas.timezone, nasId: nas.id, mac, userName: m.userName,
      ip: m.framedIp, ssid: m.ssid,
    });
    if (method === null) return decision;
    return this.noted(nas, method, decision.accept ? '' : REJECT_CODES[decision.reason] ?? 'rejected', decision);
  }

  /** A one-time UAM login, else a voucher code as User-Name. */
  private async withCredential(nas: NasEntry, m: AccessRequestMsg, userMac: string | null): Promise<AccessDecision> {
    const mac = m.mac;
    const oneTime = await this.logins.lookup(nas.tenantId, m.userName);
    if (oneTime) {
      // The session started when the guest signed in on the portal: only the secret and the device are checked.
      if (!secretMatches(m, oneTime.password)) return this.noted(nas, 'uam_login', 'wrong_password', { accept: false, reason: 'Wrong user name or password' });
      if (mac !== oneTime.mac || nas.hotspotId !== oneTime.hotspotId) {
        return this.noted(nas, 'uam_login', 'wrong_device', { accept: false, reason: 'This login belongs to another device' });
      }
      await this.logins.consume(nas.tenantId, m.userName);
      return this.decide(nas, m, mac || (userMac ?? ''), 'uam_login');
    }
    if (!mac) return this.noted(nas, 'voucher', 'no_device_address', { accept: false, reason: 'No device address (Calling-Station-Id) in the request' });
    // With CHAP the NAS proves the code as its own secret (a login page sending the code as user name and password).
    if (m.chap && !chapMatches(m.chap, m.userName)) return this.noted(nas, 'voucher', 'wrong_password', { accept: false, reason: 'Wrong user name or password' }, mac);
    try {
      await this.signIn.voucher({ hotspotId: nas.hotspotId, code: m.userName, mac, ip: m.framedIp ?? '', ssid: m.ssid ?? '', viaNas: true });
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return { accept: false, reason: rejectText(err) };
      throw err;
    }
    // Not the mirror: the actor has yet to take the redemption in (its 'started' message). After a
    // redemption the pipeline has recorded the decision already.
    return this.fromActor(nas, m, mac, null);
  }

  /**
   * Records an answer as a RADIUS decision (an object and a push onto the recorder's buffer) and hands it back.
   * `mac` only for a sign-in (its auth.* event carries it); a NAS's re-checks emit no event.
   */
  private noted(nas: { tenantId: string; hotspotId: string }, method: DecisionMethod, reason: string, d: AccessDecision, mac?: string): AccessDecision {
    this.decisions.record(mac
      ? { tenantId: nas.tenantId, hotspotId: nas.hotspotId, method, outcome: d.accept ? 'accept' : 'reject', reason, at: this.now(), source: 'radius', mac }
      : { tenantId: nas.tenantId, hotspotId: nas.hotspotId, method, outcome: d.accept ? 'accept' : 'reject', reason, at: this.now(), source: 'radius' });
    return d;
  }

  async account(m: AccountingMsg): Promise<void> {
    const nas = this.registry.get(m.nas.id) ?? { ...m.nas, timezone: 'UTC' };
    // Presence is the registered client's (a subnet client's addresses are one row on the console).
    this.presence.saw(this.registry.client(nas) ?? nas, m);
    await this.actors.request({
      t: 'acct', tenant: nas.tenantId, hs: nas.hotspotId, tz: nas.timezone, nasId: nas.id, status: m.status,
      mac: m.mac, userName: m.userName, acctSessionId: m.acctSessionId, inOctets: m.inputOctets, outOctets: m.outputOctets,
      ip: m.framedIp, ssid: m.ssid, apName: m.apName, signal: m.signalDbm, reason: m.endReason, delay: m.delayTime,
    });
  }
}

/**
 * The device a MAC-authentication request asks about ('' when it names none), or null when the request
 * carries a credential: a user name and password (PAP) or CHAP response, which is a portal's one-time UAM
 * login or a voucher code as User-Name (the same atomic redemption as the portal's). MAC authentication
 * sends the device's own MAC as User-Name; a User-Name that merely reads as a MAC (a 12-digit numeric
 * code does) but is not the Calling-Station-Id is a code. `userMac`: normalizeMac(m.userName).
 */
export function macAuthDevice(m: AccessRequestMsg, userMac: string | null): string | null {
  const macAuth = userMac !== null && (!m.mac || userMac === m.mac);
  if ((m.password !== undefined || m.chap !== undefined) && !macAuth) return null;
  return m.mac || (userMac ?? '');
}

/** The request's PAP password or CHAP response proves `secret`; compared in constant time either way. */
function secretMatches(m: AccessRequestMsg, secret: string): boolean {
  if (m.chap) return chapMatches(m.chap, secret);
  if (m.password === undefined) return false;
  const a = Buffer.from(m.password), b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function rejectText(err: AppError): string {
  switch (err.code) {
    case 'voucher_not_found': return 'Unknown voucher code';
    case 'voucher_expired': return 'Voucher expired';
    case 'voucher_not_yet_valid': return 'Voucher not valid yet';
    case 'voucher_exhausted': return 'Voucher used up';
    default: return err.message || Errors.FORBIDDEN('refused').message;
  }
}
