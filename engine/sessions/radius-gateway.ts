import { AppError, Errors } from '../errors.js';
import type { NasRegistry } from '../hotspots/nas-registry.js';
import { normalizeMac } from '../ids.js';
import type { Logger } from '../logger.js';
import type { SignInService } from '../signin/sign-in-service.js';
import type { AcceptMirror, NasCommandPort, SessionActors } from './actor-ports.js';
import type { NasCommand } from './messages.js';
import type { AccessDecision, AccessRequestMsg, AccountingMsg, NasCommandResult, NasControl, NasRecord, RadiusHandler } from './ports.js';

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

/** The engine as the RADIUS server sees it (RadiusHandler). */
export class RadiusGateway implements RadiusHandler {
  constructor(
    private readonly registry: NasRegistry,
    private readonly actors: SessionActors & AcceptMirror,
    private readonly signIn: SignInService,
    private readonly relay: NasCommandRelay,
  ) {}

  /** radius/ plugs its CoA client in here at start-up. */
  setNasControl(control: NasControl): void {
    this.relay.setControl(control);
  }

  nasByIp(ip: string): NasRecord | null {
    return this.registry.byAddress(ip);
  }

  async authorize(m: AccessRequestMsg): Promise<AccessDecision> {
    const nas = this.registry.get(m.nas.id) ?? { ...m.nas, timezone: 'UTC' };
    let mac = m.mac;
    // PAP with a voucher code as User-Name: the same atomic redemption as the portal.
    // MAC authentication sends the device's own MAC as User-Name; a User-Name that merely
    // reads as a MAC (a 12-digit numeric code does) but is not the Calling-Station-Id is a code.
    const userMac = normalizeMac(m.userName);
    const macAuth = userMac !== null && (!m.mac || userMac === m.mac);
    const voucherAuth = m.password !== undefined && !macAuth;
    if (voucherAuth) {
      if (!mac) return { accept: false, reason: 'No device address (Calling-Station-Id) in the request' };
      try {
        await this.signIn.voucher({ hotspotId: nas.hotspotId, code: m.userName, mac, ip: m.framedIp ?? '', ssid: m.ssid ?? '' });
      } catch (err) {
        if (err instanceof AppError && err.status < 500) return { accept: false, reason: rejectText(err) };
        throw err;
      }
    }
    mac ||= userMac ?? '';
    // A device the actor accepted a moment ago, through the same NAS: its answer, without the hop to the
    // actor's thread. Not after a redemption, which the actor has yet to take in (its 'started' message).
    if (!voucherAuth && mac) {
      const mirrored = this.actors.mirroredAccept(nas.tenantId, nas.hotspotId, mac, nas.id, m.userName);
      if (mirrored) return mirrored;
    }
    return this.actors.request<AccessDecision>({
      t: 'auth', tenant: nas.tenantId, hs: nas.hotspotId, tz: nas.timezone, nasId: nas.id, mac, userName: m.userName,
      ip: m.framedIp, ssid: m.ssid,
    });
  }

  async account(m: AccountingMsg): Promise<void> {
    const nas = this.registry.get(m.nas.id) ?? { ...m.nas, timezone: 'UTC' };
    await this.actors.request({
      t: 'acct', tenant: nas.tenantId, hs: nas.hotspotId, tz: nas.timezone, nasId: nas.id, status: m.status,
      mac: m.mac, userName: m.userName, acctSessionId: m.acctSessionId, inOctets: m.inputOctets, outOctets: m.outputOctets,
      ip: m.framedIp, apName: m.apName, signal: m.signalDbm, reason: m.endReason, delay: m.delayTime,
    });
  }
}

function rejectText(err: AppError): string {
  switch (err.code) {
    case 'voucher_not_found': return 'Unknown voucher code';
    case 'voucher_expired': return 'Voucher expired';
    case 'voucher_exhausted': return 'Voucher used up';
    default: return err.message || Errors.FORBIDDEN('refused').message;
  }
}
