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
  /** When true the body is exactly `{error, ...fields}`, as the spec prints it (§7). */
  readonly exactBody: boolean;

  constructor(code: string, status: number, message: string, fields?: Record<string, unknown>, exactBody = false, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.fields = fields;
    this.exactBody = exactBody;
  }

  /** The same error with what caused it attached (logged, never sent). */
  withCause(cause: unknown): AppError {
    return new AppError(this.code, this.status, this.message, this.fields, this.exactBody, cause);
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
  NAS_IP_IN_USE: def(() => ['nas_ip_in_use', 409, 'This IP address is already registered as a NAS client']),
  VOUCHER_CODE_TAKEN: def(() => ['voucher_code_taken', 409, 'A voucher with this code already exists']),
  CODE_SPACE_EXHAUSTED: def(() => ['code_space_exhausted', 409, 'Could not generate enough unique codes; use a longer code length']),
  UNKNOWN_BANDWIDTH_PROFILE: def((name: string) => ['unknown_bandwidth_profile', 400, `No bandwidth profile named ${name}`]),
  TENANT_NOT_FOUND: def(() => ['tenant_not_found', 404, 'No such tenant']),

  // Portal voucher verification: the bodies are exactly those of spec §7.
  VOUCHER_NOT_FOUND: def(() => ['voucher_not_found', 404, 'Unknown voucher code', undefined, true]),
  VOUCHER_EXPIRED: def((expiredAt: string) => ['voucher_expired', 410, 'Voucher expired', { expired_at: expiredAt }, true]),
  VOUCHER_EXHAUSTED: def((maxUses: number, currentUses: number) => [
    'voucher_exhausted', 409, 'Voucher used up', { max_uses: maxUses, current_uses: currentUses }, true,
  ]),
  VOUCHER_SSID_NOT_ALLOWED: def((ssid: string) => ['voucher_ssid_not_allowed', 403, `This voucher is not valid on the network ${JSON.stringify(ssid)}`]),
  DEVICE_BLOCKED: def(() => ['device_blocked', 403, 'This device is blocked on this network']),
  SESSION_NOT_FOUND: def(() => ['session_not_found', 404, 'No such session']),
  SESSION_NOT_ACTIVE: def(() => ['session_not_active', 409, 'The session has already ended']),
  BLOCK_NOT_FOUND: def(() => ['block_not_found', 404, 'This MAC is not blocked']),
  INVALID_MAC: def((mac: string) => ['invalid_mac', 400, `Not a MAC address: ${JSON.stringify(mac)}`]),

  // Portal page and gateway hand-back (helper I)
  TERMS_NOT_ACCEPTED: def(() => ['terms_not_accepted', 400, 'Accept the terms of use to continue']),

  // Time-stamping (RFC 3161). Not sent as HTTP errors: an evidence pack records them per day in its manifest.
  TSA_UNREACHABLE: def((detail: string) => ['tsa_unreachable', 502, `Time-stamp authority unreachable: ${detail}`]),
  TSA_REJECTED: def((status: number, text: string) => ['tsa_rejected', 502, `Time-stamp authority refused the request (PKIStatus ${status})${text ? `: ${text}` : ''}`]),
  TSA_BAD_RESPONSE: def((detail: string) => ['tsa_bad_response', 502, `Time-stamp authority answered with an unusable response: ${detail}`]),
} as const;
