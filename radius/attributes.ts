/**
 * Every RADIUS number and name this layer uses, in one place (STYLE 8).
 *
 * Standard attributes are plain numbers (RFC 2865, 2866, 2869, 3579, 5176):
 * they never change and the hot path switches on them. Vendor-specific
 * attributes are named here and resolved to numbers from the FreeRADIUS
 * dictionaries in radius/dictionaries/ once, at start-up (radius-dictionary.ts):
 * the dictionary files stay the single source of their numbers.
 */

/** Packet codes (RFC 2865 §3, RFC 2866 §3, RFC 5176 §2.3, RFC 5997). */
export const Code = {
  ACCESS_REQUEST: 1,
  ACCESS_ACCEPT: 2,
  ACCESS_REJECT: 3,
  ACCOUNTING_REQUEST: 4,
  ACCOUNTING_RESPONSE: 5,
  ACCESS_CHALLENGE: 11,
  STATUS_SERVER: 12,
  DISCONNECT_REQUEST: 40,
  DISCONNECT_ACK: 41,
  DISCONNECT_NAK: 42,
  COA_REQUEST: 43,
  COA_ACK: 44,
  COA_NAK: 45,
} as const;

/** Standard attribute types. */
export const Attr = {
  USER_NAME: 1,
  USER_PASSWORD: 2,
  CHAP_PASSWORD: 3,
  NAS_IP_ADDRESS: 4,
  NAS_PORT: 5,
  SERVICE_TYPE: 6,
  FRAMED_IP_ADDRESS: 8,
  FILTER_ID: 11,
  LOGIN_IP_HOST: 14,
  LOGIN_SERVICE: 15,
  REPLY_MESSAGE: 18,
  STATE: 24,
  CLASS: 25,
  VENDOR_SPECIFIC: 26,
  SESSION_TIMEOUT: 27,
  IDLE_TIMEOUT: 28,
  CALLED_STATION_ID: 30,
  CALLING_STATION_ID: 31,
  NAS_IDENTIFIER: 32,
  PROXY_STATE: 33,
  ACCT_STATUS_TYPE: 40,
  ACCT_DELAY_TIME: 41,
  ACCT_INPUT_OCTETS: 42,
  ACCT_OUTPUT_OCTETS: 43,
  ACCT_SESSION_ID: 44,
  ACCT_SESSION_TIME: 46,
  ACCT_TERMINATE_CAUSE: 49,
  ACCT_INPUT_GIGAWORDS: 52,
  ACCT_OUTPUT_GIGAWORDS: 53,
  EVENT_TIMESTAMP: 55,
  CHAP_CHALLENGE: 60,
  NAS_PORT_TYPE: 61,
  TUNNEL_TYPE: 64,
  TUNNEL_MEDIUM_TYPE: 65,
  MESSAGE_AUTHENTICATOR: 80,
  TUNNEL_PRIVATE_GROUP_ID: 81,
  ACCT_INTERIM_INTERVAL: 85,
  NAS_PORT_ID: 87,
  ERROR_CAUSE: 101,
} as const;

/**
 * The standard attributes a reply profile may name (engine/hotspots/nas-profiles.ts),
 * by their RFC names, with their value types.
 */
export const REPLY_ATTRIBUTES: Readonly<Record<string, { code: number; type: 'integer' | 'string' }>> = {
  'Session-Timeout': { code: Attr.SESSION_TIMEOUT, type: 'integer' },
  'Idle-Timeout': { code: Attr.IDLE_TIMEOUT, type: 'integer' },
  'Class': { code: Attr.CLASS, type: 'string' },
  'Filter-Id': { code: Attr.FILTER_ID, type: 'string' },
  'Reply-Message': { code: Attr.REPLY_MESSAGE, type: 'string' },
  // RFC 2868 §3.1, §3.2: tagged integers; with tag 0 the four octets read as the plain value.
  'Tunnel-Type': { code: Attr.TUNNEL_TYPE, type: 'integer' },
  'Tunnel-Medium-Type': { code: Attr.TUNNEL_MEDIUM_TYPE, type: 'integer' },
  // RFC 2868 §3.6: untagged text is fine while its first octet is above 0x1F (a VLAN's digits are).
  'Tunnel-Private-Group-Id': { code: Attr.TUNNEL_PRIVATE_GROUP_ID, type: 'string' },
};

/** RFC 3580 §3.31: Tunnel-Type VLAN, Tunnel-Medium-Type IEEE-802. */
export const TUNNEL_TYPE_VLAN = 13;
export const TUNNEL_MEDIUM_IEEE_802 = 6;

/** Acct-Status-Type values (RFC 2866 §5.1). */
export const AcctStatusType = {
  START: 1,
  STOP: 2,
  INTERIM_UPDATE: 3,
  ACCOUNTING_ON: 7,
  ACCOUNTING_OFF: 8,
} as const;

/**
 * Acct-Terminate-Cause values by number, as their RFC names in lower case
 * (RFC 2866 §5.10 for 1-18, RFC 3580 §3.32 for 19-22). Index 0 is unused.
 */
export const TERMINATE_CAUSES: readonly string[] = [
  '',
  'user-request', 'lost-carrier', 'lost-service', 'idle-timeout', 'session-timeout',
  'admin-reset', 'admin-reboot', 'port-error', 'nas-error', 'nas-request',
  'nas-reboot', 'port-unneeded', 'port-preempted', 'port-suspended', 'service-unavailable',
  'callback', 'user-error', 'host-request',
  'supplicant-restart', 'reauthentication-failure', 'port-reinitialized', 'port-administratively-disabled',
];

/** Error-Cause values a NAS may put in a Disconnect-NAK / CoA-NAK (RFC 5176 §3.5). */
export const ErrorCause = {
  RESIDUAL_SESSION_CONTEXT_REMOVED: 201,
  INVALID_EAP_PACKET: 202,
  UNSUPPORTED_ATTRIBUTE: 401,
  MISSING_ATTRIBUTE: 402,
  NAS_IDENTIFICATION_MISMATCH: 403,
  INVALID_REQUEST: 404,
  UNSUPPORTED_SERVICE: 405,
  UNSUPPORTED_EXTENSION: 406,
  INVALID_ATTRIBUTE_VALUE: 407,
  ADMINISTRATIVELY_PROHIBITED: 501,
  REQUEST_NOT_ROUTABLE: 502,
  /** The caller treats this one as "already gone". */
  SESSION_CONTEXT_NOT_FOUND: 503,
  SESSION_CONTEXT_NOT_REMOVABLE: 504,
  OTHER_PROXY_PROCESSING_ERROR: 505,
  RESOURCES_UNAVAILABLE: 506,
  REQUEST_INITIATED: 507,
  MULTIPLE_SESSION_SELECTION_UNSUPPORTED: 508,
} as const;

/** Vendor names as the dictionaries declare them (VENDOR lines). */
export const Vendor = {
  WISPR: 'WISPr',
  CHILLISPOT: 'ChilliSpot',
  MIKROTIK: 'Mikrotik',
} as const;

/** Vendor-specific attributes the Access-Accept carries, by dictionary name. */
export const VendorAttr = {
  /** bit/s */
  WISPR_BANDWIDTH_MAX_UP: 'WISPr-Bandwidth-Max-Up',
  WISPR_BANDWIDTH_MAX_DOWN: 'WISPr-Bandwidth-Max-Down',
  /** kbit/s */
  CHILLISPOT_BANDWIDTH_MAX_UP: 'ChilliSpot-Bandwidth-Max-Up',
  CHILLISPOT_BANDWIDTH_MAX_DOWN: 'ChilliSpot-Bandwidth-Max-Down',
  CHILLISPOT_MAX_TOTAL_OCTETS: 'ChilliSpot-Max-Total-Octets',
  CHILLISPOT_MAX_TOTAL_GIGAWORDS: 'ChilliSpot-Max-Total-Gigawords',
  /** "rx/tx" from the router's side: "<up>k/<down>k" for the guest. */
  MIKROTIK_RATE_LIMIT: 'Mikrotik-Rate-Limit',
  MIKROTIK_TOTAL_LIMIT: 'Mikrotik-Total-Limit',
  MIKROTIK_TOTAL_LIMIT_GIGAWORDS: 'Mikrotik-Total-Limit-Gigawords',
} as const;
