import { AppError } from '../engine/index.js';

/**
 * The RADIUS layer's error catalogue (STYLE 5).
 *
 * Two kinds of failure live here:
 *  - `RadiusErrors`: thrown AppErrors for mistakes made by our own callers
 *    (bad options, a broken dictionary, an attribute that cannot be encoded).
 *    They happen at start-up or in tests, never because of a packet.
 *  - `DropReason`: why a received packet was silently discarded. RADIUS has no
 *    error replies for these (RFC 2865 §3: "silently discarded"), so a drop is
 *    a counter increment, not a thrown error: creating an Error per bad packet
 *    would cost a stack capture exactly when someone floods us with them.
 */
export const RadiusErrors = {
  RADIUS_BAD_OPTIONS: (why: string) => new AppError('radius_bad_options', 500, why),
  RADIUS_DICTIONARY: (where: string, why: string) => new AppError('radius_dictionary', 500, `${where}: ${why}`),
  RADIUS_UNKNOWN_ATTRIBUTE: (name: string) => new AppError('radius_unknown_attribute', 500, `No attribute named ${name} in the RADIUS dictionaries`),
  RADIUS_PACKET_TOO_LARGE: (what: string) => new AppError('radius_packet_too_large', 500, `Encoding ${what} would exceed 4096 octets (RFC 2865 §3)`),
  RADIUS_BAD_VALUE: (what: string) => new AppError('radius_bad_value', 500, what),
} as const;

/** Why a packet was dropped: the `reason` label of `radius_dropped_total`. */
export const DropReason = {
  /** Length < 20 or > 4096, shorter than its Length field, or a bad attribute length. */
  MALFORMED: 'malformed',
  /** A code this port does not serve (e.g. an Access-Request on the accounting port, or a CoA-Request sent to us). */
  UNKNOWN_CODE: 'unknown_code',
  /** The source address is not a registered NAS. */
  UNKNOWN_NAS: 'unknown_nas',
  /** No Message-Authenticator where one is required: an Access-Request of a NAS that must sign (requireMessageAuthenticator), or any Status-Server (RFC 5997 §3). */
  MISSING_MESSAGE_AUTHENTICATOR: 'missing_message_authenticator',
  /** Message-Authenticator present but wrong (RFC 3579 §3.2): wrong secret or forged. */
  BAD_MESSAGE_AUTHENTICATOR: 'bad_message_authenticator',
  /** Accounting Request Authenticator wrong (RFC 2866 §3). */
  BAD_AUTHENTICATOR: 'bad_authenticator',
  /** A retransmission of a request we are still working on (RFC 5080 §2.2.2). */
  DUPLICATE_IN_FLIGHT: 'duplicate_in_flight',
  /** A required attribute missing or an attribute value of the wrong size. */
  INVALID_ATTRIBUTE: 'invalid_attribute',
  /** Acct-Status-Type we do not record (tunnel or failed records). */
  UNSUPPORTED_STATUS: 'unsupported_status',
  /** Too many requests waiting for the engine; the NAS will retransmit. */
  OVERLOADED: 'overloaded',
  /** The engine threw or rejected; no reply so the NAS retransmits. */
  HANDLER_ERROR: 'handler_error',
  /** RadSec: the NAS client names a certificate (radsec_cert_name) and the connection's client certificate does not carry it. */
  RADSEC_CERT_MISMATCH: 'radsec_cert_mismatch',
} as const;

export type DropReason = (typeof DropReason)[keyof typeof DropReason];
