import { GATEWAY_KINDS, MAX_LOGO_CHARS, NAS_TYPES, PORTAL_METHODS, type HotspotInput, type NasClientInput } from '../../engine/index.js';
import { looseRequestSchema, minutes, nullable, refTo, requestSchema, responseSchema, secret } from '../schemas.js';

const color = nullable({ type: 'string', pattern: '^#[0-9a-fA-F]{6}$' } as const);
/** A hotspot's portal page settings (engine PortalSettingsInput); uam_secret is write-only. */
const portalSettings = {
  type: 'object', additionalProperties: false,
  properties: {
    display_name: nullable({ type: 'string', maxLength: 100 }),
    logo: nullable({ type: 'string', maxLength: MAX_LOGO_CHARS, pattern: '^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$', description: 'A data: URI (png, jpeg, gif or webp, base64)' }),
    primary_color: color,
    accent_color: color,
    terms: nullable({ type: 'object', additionalProperties: false, properties: { tr: { type: 'string', maxLength: 20000 }, en: { type: 'string', maxLength: 20000 } } }),
    terms_required: { type: 'boolean' },
    methods: { type: 'array', uniqueItems: true, minItems: 1, items: { enum: [...PORTAL_METHODS] } },
    gateway: nullable({ enum: [...GATEWAY_KINDS] }),
    uam_auth: { enum: ['chap', 'pap'] },
    uam_secret: secret(nullable({ type: 'string', minLength: 1, maxLength: 128, description: 'CoovaChilli uamsecret / openNDS faskey; never returned' })),
  },
};

// Only http(s): the portal sends the browser there (never javascript: or data:).
const redirectUrl = nullable({ type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2000 } as const);

// Loose: the portal settings are object-or-null unions JSONSchemaType cannot express.
export const hotspotCreate = looseRequestSchema<HotspotInput & { name: string; timezone: string }>('hotspotCreate', {
  type: 'object', additionalProperties: false, required: ['name', 'timezone'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    location: { type: 'string', maxLength: 500 },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. Europe/Istanbul' },
    redirect_url: redirectUrl,
    session_minutes: nullable(minutes),
    portal: portalSettings,
  },
});

export const hotspotUpdate = looseRequestSchema<HotspotInput>('hotspotUpdate', {
  type: 'object', additionalProperties: false, minProperties: 1, required: [],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    location: { type: 'string', maxLength: 500 },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    redirect_url: redirectUrl,
    session_minutes: nullable(minutes),
    portal: portalSettings,
  },
});

export const nasClientCreate = requestSchema<NasClientInput>('nasClientCreate', {
  type: 'object', additionalProperties: false, required: ['ip', 'secret'],
  properties: {
    ip: {
      anyOf: [{ type: 'string', format: 'ipv4' }, { type: 'string', format: 'ipv6' }, { type: 'string', pattern: '^[0-9A-Fa-f:.]+/[0-9]{1,3}$', maxLength: 64 }],
      description: 'The address the NAS sends from, or a subnet in CIDR notation (10.20.0.0/24, at most /16 or /48 wide) whose every address is this NAS: access points that each send from their own address. An exact address wins over a subnet, a narrower subnet over a wider one',
    },
    secret: secret({ type: 'string', minLength: 8, maxLength: 128, description: 'RADIUS shared secret; write-only' } as const),
    name: { type: 'string', maxLength: 200 },
    coa_port: { type: 'integer', minimum: 1, maximum: 65535, default: 3799 },
    require_message_authenticator: { type: 'boolean', default: true },
    nas_identifier: {
      type: 'string', minLength: 1, maxLength: 253, pattern: '^[\\x20-\\x7e]+$',
      description: 'The NAS-Identifier (RADIUS attribute 32) this NAS sends: several NASes behind one address (a NAT) are told apart by it. Unset: this client takes the packets from its address that no other client names',
    },
    nas_type: { type: 'string', enum: NAS_TYPES, default: 'generic', description: 'Which attributes its Access-Accepts carry (docs/nas/README.md): generic sends every family at once' },
    reply_role: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7e]+$', description: 'A role or group the NAS defines, sent as Aruba-User-Role, Mikrotik-Group or Ruckus-User-Groups by those types' },
    reply_filter_id: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7e]+$', description: 'A filter or ACL name the NAS defines, sent as Filter-Id' },
    reply_vlan: { type: 'integer', minimum: 1, maximum: 4094, description: "The guest's VLAN, sent as the RFC 3580 tunnel attributes" },
    radsec_cert_name: {
      type: 'string', minLength: 1, maxLength: 253, pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
      description: 'RadSec (docs/radsec.md): the name its client certificate must carry, a subjectAltName DNS name or, for a certificate with none, its subject CN (compared without case). Packets on a RadSec connection whose certificate does not carry it are dropped. Unset: any certificate of RADSEC_CA_FILE\'s CA may send as this NAS from its address',
    },
  },
});

export const hotspot = responseSchema('hotspot', {
  type: 'object',
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, location: { type: 'string' }, timezone: { type: 'string' },
    redirect_url: nullable({ type: 'string' }), session_minutes: nullable({ type: 'integer' }),
    portal: { type: 'object', description: 'Portal page settings; the UAM secret shows only as uam_secret_set' },
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
  },
});
export const hotspotList = responseSchema('hotspotList', { type: 'object', properties: { data: { type: 'array', items: hotspot.schema } } });

export const nasClient = responseSchema('nasClient', {
  type: 'object',
  properties: {
    id: { type: 'string' }, hotspot_id: { type: 'string' }, ip: { type: 'string' }, name: nullable({ type: 'string' }),
    coa_port: { type: 'integer' }, require_message_authenticator: { type: 'boolean' }, nas_identifier: nullable({ type: 'string' }),
    nas_type: { type: 'string', enum: NAS_TYPES }, reply_role: nullable({ type: 'string' }), reply_filter_id: nullable({ type: 'string' }),
    reply_vlan: nullable({ type: 'integer' }), radsec_cert_name: nullable({ type: 'string' }),
    created_at: { type: 'string', format: 'date-time' },
  },
});
export const nasClientList = responseSchema('nasClientList', { type: 'object', properties: { data: { type: 'array', items: refTo(nasClient) } } }, [nasClient]);
