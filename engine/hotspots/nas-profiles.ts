/**
 * What an Access-Accept carries, per NAS type: data, not code (issue 24).
 *
 * A NAS client record names its type (`nas_type`, migration 028); the RADIUS
 * layer compiles each profile against the dictionaries once, at start-up
 * (radius/access-reply-encoder.ts), so a profile naming an attribute the
 * dictionaries lack, or feeding a number to a text attribute, stops the start.
 * docs/nas/README.md is the table an operator reads; the gateway pages under
 * docs/nas/ say which type to choose.
 *
 * Each item is one attribute and where its value comes from. An item whose
 * value is absent is left out of the reply (no idle time-out, no bandwidth
 * limit, no quota, no role, filter or VLAN on the NAS record).
 */

/** Where an attribute's value comes from. Units are in the name; "k" is 1000. */
export type ReplySource =
  /** seconds left of the session, at least 1 (integer) */
  | 'session_timeout'
  /** seconds; left out when 0 (integer) */
  | 'idle_timeout'
  /** our session id, echoed back by the NAS in accounting (text) */
  | 'session_id'
  /** bandwidth limits; left out when 0 (integer) */
  | 'down_bps' | 'up_bps' | 'down_kbps' | 'up_kbps'
  /** MikroTik's "rx/tx" from the router's side, "<up>k/<down>k"; left out when neither is limited (text) */
  | 'mikrotik_rate'
  /** octets left of the data quota modulo 2^32, at least 1; left out when unlimited (integer) */
  | 'quota_octets'
  /** the quota's multiples of 2^32 octets; left out when 0 (integer) */
  | 'quota_gigawords'
  /** the NAS record's reply_role, reply_filter_id (text) */
  | 'role' | 'filter_id'
  /** the NAS record's reply_vlan: as a number, as decimal text (RFC 3580 §3.31) */
  | 'vlan' | 'vlan_text'
  /** RFC 3580 §3.31's constants, sent only with a VLAN: Tunnel-Type VLAN (13), Tunnel-Medium-Type IEEE-802 (6) */
  | 'tunnel_type_vlan' | 'tunnel_medium_802';

export interface ReplyItem {
  /** A standard attribute's RFC name (radius/attributes.ts) or a vendor attribute's dictionary name. */
  readonly attribute: string;
  readonly value: ReplySource;
}

const TIMEOUTS: readonly ReplyItem[] = [
  { attribute: 'Session-Timeout', value: 'session_timeout' },
  { attribute: 'Idle-Timeout', value: 'idle_timeout' },
  { attribute: 'Class', value: 'session_id' },
];
const WISPR: readonly ReplyItem[] = [
  { attribute: 'WISPr-Bandwidth-Max-Down', value: 'down_bps' },
  { attribute: 'WISPr-Bandwidth-Max-Up', value: 'up_bps' },
];
const CHILLI: readonly ReplyItem[] = [
  { attribute: 'ChilliSpot-Bandwidth-Max-Down', value: 'down_kbps' },
  { attribute: 'ChilliSpot-Bandwidth-Max-Up', value: 'up_kbps' },
];
const CHILLI_QUOTA: readonly ReplyItem[] = [
  { attribute: 'ChilliSpot-Max-Total-Octets', value: 'quota_octets' },
  { attribute: 'ChilliSpot-Max-Total-Gigawords', value: 'quota_gigawords' },
];
const MIKROTIK: readonly ReplyItem[] = [{ attribute: 'Mikrotik-Rate-Limit', value: 'mikrotik_rate' }];
const MIKROTIK_QUOTA: readonly ReplyItem[] = [
  { attribute: 'Mikrotik-Total-Limit', value: 'quota_octets' },
  { attribute: 'Mikrotik-Total-Limit-Gigawords', value: 'quota_gigawords' },
];
const FILTER: readonly ReplyItem[] = [{ attribute: 'Filter-Id', value: 'filter_id' }];
/** RFC 3580 §3.31: VLAN assignment through the tunnel attributes of RFC 2868. */
const VLAN: readonly ReplyItem[] = [
  { attribute: 'Tunnel-Type', value: 'tunnel_type_vlan' },
  { attribute: 'Tunnel-Medium-Type', value: 'tunnel_medium_802' },
  { attribute: 'Tunnel-Private-Group-Id', value: 'vlan_text' },
];

/** The profiles, by the `nas_type` a NAS client record names. */
export const NAS_REPLY_PROFILES = {
  /** Every family at once, as before NAS types existed: a NAS ignores vendors it does not know (RFC 2865 §5.26). */
  generic: [
    ...TIMEOUTS,
    { attribute: 'WISPr-Bandwidth-Max-Down', value: 'down_bps' },
    { attribute: 'ChilliSpot-Bandwidth-Max-Down', value: 'down_kbps' },
    { attribute: 'WISPr-Bandwidth-Max-Up', value: 'up_bps' },
    { attribute: 'ChilliSpot-Bandwidth-Max-Up', value: 'up_kbps' },
    ...MIKROTIK, ...CHILLI_QUOTA, ...MIKROTIK_QUOTA, ...FILTER, ...VLAN,
  ],
  /** CoovaChilli (chilli.conf), and openNDS or others built on ChilliSpot's attributes. */
  coovachilli: [...TIMEOUTS, ...CHILLI, ...CHILLI_QUOTA, ...FILTER],
  /** MikroTik RouterOS hotspot; Mikrotik-Group takes the role (a hotspot user profile). */
  mikrotik: [...TIMEOUTS, ...MIKROTIK, ...MIKROTIK_QUOTA, { attribute: 'Mikrotik-Group', value: 'role' }, ...FILTER],
  /** UniFi access points and their external portal. */
  unifi: [...TIMEOUTS, ...WISPR, ...VLAN],
  /** Cisco Catalyst 9800 (central web authentication): Airespace bandwidth contracts in kbit/s, an ACL by Filter-Id. */
  cisco: [
    ...TIMEOUTS,
    { attribute: 'Airespace-Data-Bandwidth-Average-Contract', value: 'down_kbps' },
    { attribute: 'Airespace-Data-Bandwidth-Average-Contract-Upstream', value: 'up_kbps' },
    ...FILTER, ...VLAN,
  ],
  /** Aruba controllers and Instant APs: the role carries the policy. */
  aruba: [...TIMEOUTS, ...WISPR, { attribute: 'Aruba-User-Role', value: 'role' }, ...FILTER, ...VLAN],
  /** Ruckus SmartZone and Unleashed: WISPr bandwidth; the role as a user group. */
  ruckus: [...TIMEOUTS, ...WISPR, { attribute: 'Ruckus-User-Groups', value: 'role' }, ...FILTER, ...VLAN],
} as const satisfies Record<string, readonly ReplyItem[]>;

export type NasType = keyof typeof NAS_REPLY_PROFILES;

/** The NAS types, for the API's schema and the console's choice. */
export const NAS_TYPES = Object.keys(NAS_REPLY_PROFILES) as NasType[];

/** A NAS record's own reply values (migration 028); each null when the NAS has none. */
export interface NasReplyOptions {
  /** Aruba-User-Role, Mikrotik-Group, Ruckus-User-Groups: a role or group the NAS defines. */
  role: string | null;
  /** Filter-Id (RFC 2865 §5.11): a filter or ACL the NAS defines. */
  filterId: string | null;
  /** 1-4094: the guest's VLAN (RFC 3580 §3.31). */
  vlan: number | null;
}
