/**
 * One error type for the whole engine. Business failures carry a stable
 * `code` (the `error` field on the wire), an HTTP status, and optionally extra
 * fields that the spec puts in the body (e.g. `max_uses` for an exhausted
 * voucher). Everything the HTTP layer sends as an error comes from here.
 */
export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly fields: Record<string, unknown> | undefined;
  /** When true the body is exactly `{error, ...fields}`, as the contract prints it (the portal's voucher errors). */
  readonly exactBody: boolean;

  constructor(code: string, status: number, message: string, fields?: Record<string, unknown>, exactBody = false, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.fields = fields;
    this.exactBody = exactBody;
  }

  /**
   * An error that crossed a thread boundary as its code, status and message
   * (an actor thread's reply): the same catalogue error on this side.
   */
  static fromWire(code: string | undefined, status: number | undefined, message: string | undefined): AppError {
    return code ? new AppError(code, status ?? 500, message ?? '') : Errors.INTERNAL();
  }

  /** The same error with what caused it attached (logged, never sent). */
  withCause(cause: unknown): AppError {
    return new AppError(this.code, this.status, this.message, this.fields, this.exactBody, cause);
  }

  /** The same error with more body fields (what a long operation got done before it failed). */
  withFields(extra: Record<string, unknown>): AppError {
    return new AppError(this.code, this.status, this.message, { ...this.fields, ...extra }, this.exactBody, this);
  }

  /** The JSON body: `{error, message, ...fields}`, or the spec's exact shape. */
  toBody(): Record<string, unknown> {
    if (this.exactBody) return { error: this.code, ...this.fields };
    return { error: this.code, message: this.message, ...this.fields };
  }
}

type Maker<A extends unknown[]> = (...args: A) => AppError;

type Entry = [code: string, status: number, message: string, fields?: Record<string, unknown>, exactBody?: boolean];

function def<A extends unknown[]>(build: (...args: A) => Entry): Maker<A> {
  return (...args: A) => {
    const [code, status, message, fields, exactBody] = build(...args);
    return new AppError(code, status, message, fields, exactBody);
  };
}

/** The error catalogue. Codes are part of the API contract: never rename one. */
export const Errors = {
  // HTTP surface
  INVALID_JSON: def((detail: string) => ['invalid_json', 400, `Request body is not valid JSON: ${detail}`]),
  VALIDATION_FAILED: def((message: string, details: unknown[]) => ['validation_failed', 400, message, { details }]),
  PAYLOAD_TOO_LARGE: def((limit: number) => ['payload_too_large', 413, `Request body exceeds ${limit} bytes`]),
  UNSUPPORTED_MEDIA_TYPE: def(() => ['unsupported_media_type', 415, 'Send the body as application/json']),
  NOT_FOUND: def(() => ['not_found', 404, 'No such route']),
  METHOD_NOT_ALLOWED: def((method: string) => ['method_not_allowed', 405, `Method ${method} is not allowed on this path`]),
  UNAUTHORIZED: def((why: string) => ['unauthorized', 401, why]),
  FORBIDDEN: def((why: string) => ['forbidden', 403, why]),
  MODULE_NOT_LICENSED: def((module: string) => ['module_not_licensed', 403, `The ${module} module is not licensed for this tenant`]),
  SERVICE_UNAVAILABLE: def((what: string) => ['service_unavailable', 503, `${what} is unavailable, try again shortly`]),
  SHUTTING_DOWN: def(() => ['service_unavailable', 503, 'The service is shutting down; try again shortly']),
  BODY_TIMEOUT: def((ms: number) => ['request_timeout', 408, `The request body did not arrive within ${ms} ms`]),
  /** The client closed the connection mid-upload: ends the request; never sent (nobody is there to read it). */
  CLIENT_GONE: def(() => ['client_closed_request', 499, 'The client closed the connection before its request was read']),
  TOO_MANY_CONNECTIONS: def((max: number) => ['too_many_connections', 429, `This address holds ${max} requests open already; close some and retry`]),
  TOO_MANY_STREAMS: def((scope: string, max: number) => ['too_many_streams', 429, `Too many open streams for this ${scope} (at most ${max}); close one and retry`]),
  INTERNAL: def(() => ['internal_error', 500, 'Internal error; it has been logged']),
  UNEXPECTED_SCRIPT_ANSWER: def((script: string, answer: string) => ['internal_error', 500, `Unexpected answer ${JSON.stringify(answer)} from ${script}`]),

  // Session engine (hotspot actors on worker threads)
  SESSION_ENGINE_RESTARTING: def(() => ['session_engine_restarting', 503, 'Session engine thread restarting; retry']),
  SESSION_ENGINE_TIMEOUT: def(() => ['session_engine_timeout', 503, 'Session engine did not answer in time; retry']),
  HOTSPOT_OWNED_ELSEWHERE: def(() => ['hotspot_owned_elsewhere', 503, 'Another engine process owns this hotspot; retry']),
  HOTSPOT_BUSY: def(() => ['busy', 503, 'Hotspot mailbox full; retry']),
  VOUCHER_STORE_CONFLICT: def(() => ['voucher_store_conflict', 409, 'Voucher store out of step for a code; retry the request']),

  // Resources
  HOTSPOT_NOT_FOUND: def(() => ['hotspot_not_found', 404, 'No such hotspot']),
  VOUCHER_ID_NOT_FOUND: def(() => ['voucher_not_found', 404, 'No such voucher']),
  NAS_IP_IN_USE: def(() => ['nas_ip_in_use', 409, 'This IP address is registered already: with this NAS-Identifier, or without one, or for another account (an address belongs to one account)']),
  NAS_SUBNET_OVERLAP: def(() => ['nas_subnet_overlap', 409, 'This address or subnet overlaps a subnet, or holds an address, that another account registered (an address belongs to one account)']),
  VOUCHER_CODE_TAKEN: def(() => ['voucher_code_taken', 409, 'A voucher with this code already exists']),
  VOUCHER_SHEETS_UNAVAILABLE: def(() => ['voucher_sheets_unavailable', 503, 'Voucher sheets need PORTAL_PUBLIC_URL, the address their QR codes open']),
  CODE_SPACE_EXHAUSTED: def(() => ['code_space_exhausted', 409, 'Could not generate enough unique codes; use a longer code length']),
  CSV_HEADER_INVALID: def((found: string, expected: string) => [
    'csv_header_invalid', 400, `The file's header is "${found}"; it must be exactly "${expected}". Nothing was imported`, { found, expected },
  ]),
  CSV_MEDIA_TYPE: def(() => ['unsupported_media_type', 415, 'Send the file as text/csv, or as multipart/form-data with the file in the field "file"']),
  CSV_FILE_MISSING: def(() => ['validation_failed', 400, 'The multipart body has no file in the field "file"', { details: [{ field: 'file', message: 'required' }] }]),
  CSV_RECORD_UNREADABLE: def((line: number, max: number) => [
    'csv_record_unreadable', 400, `The record starting at line ${line} is longer than ${max} characters or its quoted field never closes (an unterminated quote?); `
      + 'nothing from it on was imported (nor anything else beyond the rows counted in `imported`, if any)', { line },
  ]),
  VOUCHER_IMPORT_INTERRUPTED: def(() => ['voucher_import_interrupted', 503, 'The voucher store failed part-way through the import; the rows counted in `imported` are stored, the rest were not imported']),
  UNKNOWN_BANDWIDTH_PROFILE: def((name: string) => ['unknown_bandwidth_profile', 400, `No bandwidth profile named ${name}`]),
  TENANT_NOT_FOUND: def(() => ['tenant_not_found', 404, 'No such tenant']),
  /** The dashboard's records (an incident, a NAS): another tenant's are as unknown as ones that never existed. */
  RECORD_NOT_FOUND: def((what: string) => ['not_found', 404, `No such ${what}`]),
  INCIDENT_TRANSITION_INVALID: def((from: string, to: string) => [
    'incident_transition_invalid', 409, `An incident in state ${from} cannot move to ${to}: states only move forward, and resolved is the end`,
    { state: from },
  ]),

  // Portal voucher verification: the bodies are exactly the contract's: {error: voucher_not_found},
  // {error: voucher_expired, expired_at}, {error: voucher_exhausted, max_uses, current_uses}.
  VOUCHER_NOT_FOUND: def(() => ['voucher_not_found', 404, 'Unknown voucher code', undefined, true]),
  VOUCHER_EXPIRED: def((expiredAt: string) => ['voucher_expired', 410, 'Voucher expired', { expired_at: expiredAt }, true]),
  VOUCHER_EXHAUSTED: def((maxUses: number, currentUses: number) => [
    'voucher_exhausted', 409, 'Voucher used up', { max_uses: maxUses, current_uses: currentUses }, true,
  ]),
  /** Before a match-day voucher's window (use-voucher-18.lua): nothing spent, not a guess. 403 as the SSID refusal: a real code, not usable here and now. */
  VOUCHER_NOT_YET_VALID: def((validFrom: string) => ['voucher_not_yet_valid', 403, 'Voucher not valid yet', { valid_from: validFrom }, true]),
  VOUCHER_SSID_NOT_ALLOWED: def((ssid: string) => ['voucher_ssid_not_allowed', 403, `This voucher is not valid on the network ${JSON.stringify(ssid)}`]),
  DEVICE_BLOCKED: def(() => ['device_blocked', 403, 'This device is blocked on this network']),
  SESSION_NOT_FOUND: def(() => ['session_not_found', 404, 'No such session']),
  SESSION_NOT_ACTIVE: def(() => ['session_not_active', 409, 'The session has already ended']),
  BLOCK_NOT_FOUND: def(() => ['block_not_found', 404, 'This MAC is not blocked']),
  /** A guessing limit reached (use-voucher-18.lua): every code refused, a valid one too, nothing spent. */
  TOO_MANY_ATTEMPTS: def((retryAfterSec: number) => [
    'too_many_attempts', 429, `Too many unknown codes from this device or address; try again in ${retryAfterSec} s`, { retry_after: retryAfterSec },
  ]),
  INVALID_MAC: def((mac: string) => ['invalid_mac', 400, `Not a MAC address: ${JSON.stringify(mac)}`]),

  // OTP sign-in (engine/signin/otp/): bodies are {error, message, ...fields}.
  PHONE_INVALID: def(() => ['phone_invalid', 400, 'Not a phone number; write it with the country code, e.g. +905321234567']),
  EMAIL_INVALID: def(() => ['email_invalid', 400, 'Not an e-mail address']),
  PHONE_PREFIX_BLOCKED: def(() => ['phone_prefix_blocked', 403, 'Codes cannot be sent to numbers of this country or range here']),
  METHOD_NOT_ALLOWED_HERE: def((method: string) => ['method_not_allowed_here', 403, `Signing in by ${method} is not offered at this hotspot`]),
  OTP_RATE_LIMITED: def((retryAfterSec: number) => ['otp_rate_limited', 429, `Too many codes requested; try again in ${retryAfterSec} s`, { retry_after: retryAfterSec }]),
  OTP_SEND_FAILED: def(() => ['otp_send_failed', 502, 'The code could not be sent; try again or choose another way to sign in']),
  OTP_INVALID: def((attemptsLeft: number) => ['otp_invalid', 401, 'Wrong code', { attempts_left: attemptsLeft }]),
  OTP_EXPIRED: def(() => ['otp_expired', 410, 'No valid code: it was never sent, already used, or is older than 5 minutes; request a new one']),
  OTP_LOCKED: def(() => ['otp_locked', 423, 'Too many wrong codes; request a new one']),
  OTP_REQUEST_NOT_FOUND: def(() => ['otp_request_not_found', 404, 'No such code request (or it is too old)']),
  // Room sign-in over a PMS link (engine/pms/; docs/pms.md)
  PMS_GUEST_NOT_FOUND: def(() => ['pms_guest_not_found', 401, 'No guest of that surname is in that room']),
  PMS_UNAVAILABLE: def(() => ['pms_unavailable', 503, "The hotel's guest list cannot be checked just now; try again shortly or ask the front desk"]),
  PMS_LINK_NOT_FOUND: def(() => ['pms_link_not_found', 404, 'This hotspot has no PMS link']),
  // Portal page and gateway hand-back
  TERMS_NOT_ACCEPTED: def(() => ['terms_not_accepted', 400, 'Accept the terms of use to continue']),

  // Time-stamping (RFC 3161). Not sent as HTTP errors: an evidence pack records them per day in its manifest.
  TSA_UNREACHABLE: def((detail: string) => ['tsa_unreachable', 502, `Time-stamp authority unreachable: ${detail}`]),
  TSA_REJECTED: def((status: number, text: string) => ['tsa_rejected', 502, `Time-stamp authority refused the request (PKIStatus ${status})${text ? `: ${text}` : ''}`]),
  TSA_BAD_RESPONSE: def((detail: string) => ['tsa_bad_response', 502, `Time-stamp authority answered with an unusable response: ${detail}`]),

  // OTP providers and platform administration (engine/signin/providers, /admin/)
  CALLBACK_REFUSED: def(() => ['callback_refused', 401, 'Delivery callback not accepted: unknown tenant or provider, or bad signature']),
  PLATFORM_ONLY: def((why: string) => ['platform_only', 403, `Platform administration needs a platform token: ${why}`]),
  // Outbound targets (engine/net/outbound-target.ts): a URL a tenant gives the service to connect to.
  TARGET_NOT_ALLOWED: def((field: string, why: string) => ['target_not_allowed', 400, `${field} ${why}`]),

  // Sponsor approval (engine/signin/sponsor/)
  SPONSOR_NOT_ALLOWED: def(() => ['sponsor_not_allowed', 403, "This address cannot sponsor guests here: it is not in the venue's allowed domains or list"]),
  SPONSOR_RATE_LIMITED: def((retryAfterSec: number) => ['sponsor_rate_limited', 429, `Too many sponsor requests; try again in ${retryAfterSec} s`, { retry_after: retryAfterSec }]),
  SPONSOR_SEND_FAILED: def(() => ['sponsor_send_failed', 502, 'The request could not be sent to the sponsor; try again or choose another way to sign in']),
  // Personal data (engine/privacy/; docs/privacy.md)
  PRIVACY_REQUEST_NOT_FOUND: def(() => ['privacy_request_not_found', 404, 'No such data-subject request']),
  PRIVACY_REQUEST_CLOSED: def(() => ['privacy_request_closed', 409, 'This data-subject request is closed; its subject is no longer held in clear']),
  PRIVACY_ERASURE_BUSY: def(() => [
    'privacy_erasure_busy', 503, "The subject's last session records are still on their way to the store; nothing was erased, try again shortly",
  ]),
  SPONSOR_REQUEST_NOT_FOUND: def(() => ['sponsor_request_not_found', 404, 'No such sponsor request (or it is too old)']),
  /** The sponsor said no: a decision reason (auth.failure, decision log), never an HTTP answer (the guest's status poll says {status:"rejected"}). */
  SPONSOR_REJECTED: def(() => ['sponsor_rejected', 403, 'The sponsor rejected the request']),
  SPONSOR_LINK_USED: def(() => ['sponsor_link_used', 409, 'This link has been used already; nothing was changed']),
  SPONSOR_LINK_EXPIRED: def(() => ['sponsor_link_expired', 410, 'This link has expired; nothing was changed']),
  SPONSOR_UNAVAILABLE: def(() => ['sponsor_unavailable', 503, 'Sponsor approval needs PORTAL_PUBLIC_URL, the address sponsors open their links at']),

  // Tenant secrets at rest (engine/secrets/)
  SECRETS_UNAVAILABLE: def(() => ['secrets_unavailable', 503, 'This service cannot store secrets (SECRETS_KEY is not set); give an env://NAME reference instead']),

  // Webhooks (engine/webhooks/)
  WEBHOOK_NOT_FOUND: def(() => ['webhook_not_found', 404, 'No such webhook']),
  WEBHOOK_DELIVERY_NOT_FOUND: def(() => ['webhook_delivery_not_found', 404, 'No such delivery of this webhook (or it is no longer kept)']),
  WEBHOOK_INACTIVE: def((reason: string | null) => ['webhook_inactive', 409,
    `This webhook is disabled${reason ? ` (${reason})` : ''}: nothing is sent to it; subscribe the receiver again`]),
  WEBHOOK_SECRET_UNSEALABLE: def(() => ['secrets_unavailable', 503, 'This service cannot store webhook secrets (SECRETS_KEY is not set)']),

  // Reports (engine/reports/; docs/reports.md)
  REPORT_DATE_INVALID: def((field: string, value: string) => ['report_date_invalid', 400,
    `${field} must be a calendar date as YYYY-MM-DD, not ${JSON.stringify(value.slice(0, 40))}`, { field }]),
  REPORT_RANGE_REVERSED: def((from: string, to: string) => ['report_range_reversed', 400, `to (${to}) is before from (${from}); give the earlier date as from`]),
  REPORT_RANGE_TOO_LONG: def((days: number, max: number) => ['report_range_too_long', 400,
    `The range covers ${days} days; a report covers at most ${max} days, both ends included`, { max_days: max }]),
  REPORT_TOO_MANY_VENUES: def((n: number, max: number) => ['report_too_many_venues', 400,
    `${n} venues named; a report covers at most ${max}`, { max_venues: max }]),
  // Scheduled report e-mail (engine/schedules/; docs/reports.md, Scheduled e-mail)
  REPORT_SCHEDULE_NOT_FOUND: def(() => ['report_schedule_not_found', 404, 'No such report schedule']),
  REPORT_RECIPIENT_INVALID: def((field: string, want: string) => ['report_recipient_invalid', 400, `${field} must be ${want}`, { field }]),
  /** A scheduled mail with no SMTP_URL to go through: recorded on the run (its `error`), never an HTTP answer. */
  REPORT_SMTP_NOT_CONFIGURED: def(() => ['report_smtp_not_configured', 503, 'SMTP_URL is not set: scheduled report mail cannot be sent; the run is tried again']),
} as const;
