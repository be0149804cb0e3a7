/**
 * The contract between the engine's session logic and the RADIUS layer.
 *
 * radius/ decodes packets, checks them, and hands the engine one of these
 * plain messages; the engine answers with a decision. The engine reaches the
 * NAS (Disconnect / CoA) only through the NasControl port, which radius/
 * implements and scripts/ wires in: the engine never imports radius/.
 */
import type { NasReplyOptions } from '../hotspots/nas-profiles.js';

/** A registered RADIUS client, as the RADIUS server needs it. */
export interface NasRecord {
  id: string;
  tenantId: string;
  hotspotId: string;
  /** Source address the NAS sends from (also where CoA goes). */
  ip: string;
  secret: string;
  coaPort: number;
  requireMessageAuthenticator: boolean;
  /** Which reply profile its Access-Accepts follow (engine/hotspots/nas-profiles.ts); unset: generic. */
  nasType?: string;
  /** Its own role, filter and VLAN for the reply (migration 028); unset: none. */
  reply?: NasReplyOptions;
  /**
   * RadSec only (migration 029): the name its connection's client certificate
   * must carry (subjectAltName DNS, else subject CN), in lower case; unset: any
   * certificate of RADSEC_CA_FILE's CA. Never matched against a UDP packet.
   */
  radsecCertName?: string;
}

/** What the NAS told us in an Access-Request, already decoded and checked. */
export interface AccessRequestMsg {
  nas: NasRecord;
  /** Canonical MAC (AA:BB:..) from Calling-Station-Id, or User-Name when that is a MAC; '' when neither is. */
  mac: string;
  userName: string;
  /** The decrypted PAP password (User-Password), when present. */
  password?: string;
  /** CHAP (RFC 2865 §2.2): the NAS sent CHAP-Password instead of User-Password; the engine checks it against the credential's secret. */
  chap?: ChapResponse;
  framedIp?: string;
  /** From Called-Station-Id ("AA-BB-..:SSID") when the NAS sends it. */
  ssid?: string;
  nasPortId?: string;
  /** NAS-Port and Called-Station-Id as sent: the dashboard's port map (engine/nas/nas-presence.ts). */
  nasPort?: number;
  calledStationId?: string;
}

/** A CHAP-Password with the challenge it answers (RFC 2865 §5.3, §5.40). */
export interface ChapResponse {
  /** The CHAP Identifier octet. */
  ident: number;
  /** The 16-octet response: MD5(ident || secret || challenge). */
  response: Buffer;
  /** CHAP-Challenge, else the Request Authenticator (RFC 2865 §2.2). */
  challenge: Buffer;
}

/** The engine's answer to an Access-Request. */
export type AccessDecision =
  | {
      accept: true;
      /** Our session id (ses_/sess_); the NAS may echo it back in Class. */
      sessionId: string;
      /** Remaining seconds of the session. */
      sessionTimeout: number;
      /** Seconds without traffic before the session ends; 0: none. */
      idleTimeout: number;
      /** Bandwidth in kbit/s; 0: no limit. */
      downKbps: number;
      upKbps: number;
      /** Bytes left of the data quota (in and out together); null: unlimited. */
      quotaBytes: number | null;
    }
  | { accept: false; reason: string };

export type AcctStatus = 'start' | 'stop' | 'interim' | 'on' | 'off';

/** The end reasons a NAS can report for a session (a subset of the engine's EndReason). */
export type StopReason = 'user_request' | 'idle_timeout' | 'session_timeout' | 'admin_disconnect' | 'nas_reboot' | 'lost_carrier';

/** An Accounting-Request, decoded; counters already combined with their Gigawords. */
export interface AccountingMsg {
  nas: NasRecord;
  status: AcctStatus;
  mac: string;
  userName: string;
  /** Acct-Session-Id chosen by the NAS. */
  acctSessionId: string;
  framedIp?: string;
  ssid?: string;
  /** Octets from the guest's point of view: in = downloaded, out = uploaded (RFC 2866 counts from the NAS port). */
  inputOctets: number;
  outputOctets: number;
  sessionTime: number;
  /** Why the session stopped, when the NAS's Acct-Terminate-Cause names one of ours (radius/ translates it); else the guest's own stop. */
  endReason?: StopReason;
  /** Acct-Delay-Time: the retransmit of one event changes only this. */
  delayTime: number;
  /** Extra console fields the NAS sent (ap name, signal) when known. */
  apName?: string;
  signalDbm?: number;
  /** NAS-Port, NAS-Port-Id and Called-Station-Id as sent: the dashboard's port map (engine/nas/nas-presence.ts). */
  nasPort?: number;
  nasPortId?: string;
  calledStationId?: string;
}

/** How a NAS answered a Disconnect-Request or CoA-Request (RFC 5176). */
export type NasCommandResult =
  | { outcome: 'ack' }
  | { outcome: 'nak'; errorCause: number | null }
  | { outcome: 'timeout' };

/** Who a Disconnect or CoA is about. */
export interface NasSessionRef {
  nas: NasRecord;
  userName: string;
  mac: string;
  acctSessionId?: string;
  framedIp?: string;
}

/** The engine's way to the NAS; implemented by radius/ (RFC 5176 client). */
export interface NasControl {
  disconnect(ref: NasSessionRef): Promise<NasCommandResult>;
  /** Change a live session's limits at once; sends the new Session-Timeout (seconds remaining). */
  changeAuthorization(ref: NasSessionRef, change: { sessionTimeout: number }): Promise<NasCommandResult>;
}

/** What the RADIUS server needs from the engine. */
export interface RadiusHandler {
  /**
   * The registered client at this source address, told apart from others at
   * the same address by the packet's NAS-Identifier (`identifier()` reads it
   * from the packet, only when asked), or null (then the packet is dropped
   * and counted).
   */
  nasByIp(ip: string, identifier: () => string | undefined): NasRecord | null | Promise<NasRecord | null>;
  /** A plain value when the answer is known at once (a mirrored accept): the server then replies without a microtask. */
  authorize(msg: AccessRequestMsg): AccessDecision | Promise<AccessDecision>;
  /** Resolves once the accounting data is durably recorded; only then may the server answer (RFC 2866 §2). */
  account(msg: AccountingMsg): Promise<void>;
  /**
   * Access-Requests a RADIUS thread answered itself from the auth mirror (radius/radius-thread.ts), reported
   * in batches: counted as decisions and as the NAS's presence, as if authorize() had answered them.
   */
  answeredFromMirror?(answers: readonly MirroredAnswers[]): void;
}

/** Access-Requests a RADIUS thread answered from the auth mirror through one NAS since its last report. */
export interface MirroredAnswers {
  nasId: string;
  count: number;
  /** When the last of them was answered, ms. */
  at: number;
  /** The ports they came through, one entry per port (NAS-Port-Id, else Called-Station-Id, else NAS-Port). */
  ports: { nasPort?: number; nasPortId?: string; calledStationId?: string }[];
}
