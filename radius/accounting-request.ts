import type { AccountingMsg, AcctStatus, NasRecord, StopReason } from '../engine/index.js';
import { AcctStatusType, Attr, Code, TERMINATE_CAUSES } from './attributes.js';
import { HEADER_LENGTH, readIPv4, readString, readUint32 } from './codec.js';
import { DropReason } from './errors.js';
import { macOf, ssidOf } from './access-request.js';
import type { PacketWriter } from './packet-writer.js';

const TWO_32 = 0x1_0000_0000;
/**
 * The largest Acct-*-Gigawords taken: 2^14, so a total stays under about
 * 2^46 bytes (70 TB). Session and daily counters are summed in Redis's Lua, whose numbers
 * print exactly only up to 14 digits, and stored as bigint in Postgres; a
 * bigger total would corrupt a counter and get the session's end record
 * refused.
 */
const MAX_GIGAWORDS = 16_384;

const STATUS: ReadonlyMap<number, AcctStatus> = new Map([
  [AcctStatusType.START, 'start'],
  [AcctStatusType.STOP, 'stop'],
  [AcctStatusType.INTERIM_UPDATE, 'interim'],
  [AcctStatusType.ACCOUNTING_ON, 'on'],
  [AcctStatusType.ACCOUNTING_OFF, 'off'],
]);

/**
 * RFC 2866 §5.10 Acct-Terminate-Cause values, by their names in
 * TERMINATE_CAUSES, that the engine records as an end reason of their own.
 * Any other cause, or none, is left out: the engine takes the stop as the
 * guest's (user_request).
 */
const END_REASONS: ReadonlyMap<string, StopReason> = new Map<string, StopReason>([
  ['user-request', 'user_request'],
  ['idle-timeout', 'idle_timeout'],
  ['session-timeout', 'session_timeout'],
  ['admin-reset', 'admin_disconnect'],
  ['admin-reboot', 'nas_reboot'],
  ['nas-reboot', 'nas_reboot'],
  ['lost-carrier', 'lost_carrier'],
]);

/**
 * Translates an Accounting-Request, already framed and authenticated, into
 * the engine's message in one pass; returns why it must be dropped instead
 * (a string) when Acct-Status-Type is missing or one we do not record, or an
 * integer attribute has the wrong size.
 *
 * Counters: RFC 2866 §5.3/§5.4 count octets at the NAS port, so
 * Acct-Input-Octets is what the guest sent. The engine's message counts from
 * the guest: `inputOctets` (downloaded) is Acct-Output-Octets and
 * `outputOctets` (uploaded) is Acct-Input-Octets, each combined with its
 * Gigawords attribute (RFC 2869 §5.1/§5.2: how many times the 2^32 counter wrapped).
 *
 * `apName` is NAS-Identifier when sent: controllers and APs put their own
 * name there. No standard attribute carries a signal strength.
 */
export function readAccountingRequest(buf: Buffer, len: number, nas: NasRecord): AccountingMsg | DropReason {
  let statusType = -1;
  let userName = '';
  let calling = '';
  let called = '';
  let acctSessionId = '';
  let framedIp: string | undefined;
  let apName: string | undefined;
  let nasPortId: string | undefined;
  let nasPort: number | undefined;
  let inOctets = 0, outOctets = 0, inGiga = 0, outGiga = 0;
  let sessionTime = 0, delayTime = 0, cause = 0;
  for (let at = HEADER_LENGTH; at < len; at += buf[at + 1]!) {
    let n = 0;
    switch (buf[at]) {
      case Attr.USER_NAME: userName = readString(buf, at); continue;
      case Attr.CALLING_STATION_ID: calling = readString(buf, at); continue;
      case Attr.CALLED_STATION_ID: called = readString(buf, at); continue;
      case Attr.ACCT_SESSION_ID: acctSessionId = readString(buf, at); continue;
      case Attr.NAS_IDENTIFIER: apName = readString(buf, at); continue;
      case Attr.NAS_PORT_ID: nasPortId = readString(buf, at); continue;
      case Attr.NAS_PORT: {
        // Only shown on the dashboard: a malformed one is left out, not a reason to drop the record.
        const n = readUint32(buf, at);
        if (n >= 0) nasPort = n;
        continue;
      }
      case Attr.FRAMED_IP_ADDRESS: {
        const ip = readIPv4(buf, at);
        if (ip === null) return DropReason.INVALID_ATTRIBUTE;
        framedIp = ip;
        continue;
      }
      case Attr.ACCT_STATUS_TYPE: n = statusType = readUint32(buf, at); break;
      case Attr.ACCT_INPUT_OCTETS: n = inOctets = readUint32(buf, at); break;
      case Attr.ACCT_OUTPUT_OCTETS: n = outOctets = readUint32(buf, at); break;
      case Attr.ACCT_INPUT_GIGAWORDS: n = inGiga = readUint32(buf, at); break;
      case Attr.ACCT_OUTPUT_GIGAWORDS: n = outGiga = readUint32(buf, at); break;
      case Attr.ACCT_SESSION_TIME: n = sessionTime = readUint32(buf, at); break;
      case Attr.ACCT_DELAY_TIME: n = delayTime = readUint32(buf, at); break;
      case Attr.ACCT_TERMINATE_CAUSE: n = cause = readUint32(buf, at); break;
      default: continue;
    }
    if (n < 0) return DropReason.INVALID_ATTRIBUTE;
  }
  if (statusType < 0) return DropReason.INVALID_ATTRIBUTE;
  // A total no NAS port reaches (over 64 TiB): an invalid attribute, not a number to carry on.
  if (inGiga > MAX_GIGAWORDS || outGiga > MAX_GIGAWORDS) return DropReason.INVALID_ATTRIBUTE;
  const status = STATUS.get(statusType);
  if (!status) return DropReason.UNSUPPORTED_STATUS;
  return {
    nas,
    status,
    mac: macOf(calling, userName),
    userName,
    acctSessionId,
    framedIp,
    ssid: ssidOf(called),
    inputOctets: outGiga * TWO_32 + outOctets,
    outputOctets: inGiga * TWO_32 + inOctets,
    sessionTime,
    endReason: END_REASONS.get(TERMINATE_CAUSES[cause] ?? ''),
    delayTime,
    apName,
    nasPort,
    nasPortId,
    calledStationId: called || undefined,
  };
}

/** Accounting-Response (RFC 2866 §4.2): only the request's Proxy-State echoed; Response Authenticator over the request's. */
export function encodeAccountingResponse(w: PacketWriter, request: Buffer, len: number, secret: string): Buffer {
  return w.begin(Code.ACCOUNTING_RESPONSE, request[1]!)
    .copyAttributes(request, len, Attr.PROXY_STATE)
    .finishReply(request.subarray(4, HEADER_LENGTH), secret);
}
