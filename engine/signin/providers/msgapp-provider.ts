import { Errors } from '../../errors.js';
import { isEnvRef } from './env-ref.js';
import { NETGSM_BASE_URL } from './netgsm-sms.js';

/**
 * Messaging-app provider types; they differ in who bills and who manages templates.
 * A: API key and business device ID, provider template ID. B (direct): access token
 * and phone number ID, template `name:lang`. C (SMS carrier): the SMS API's
 * `usercode:password`, template fixed at the carrier.
 */
export type MsgappType = 'A' | 'B' | 'C';

/**
 * A tenant's messaging-app provider as stored and as the admin API returns it:
 * secrets appear only as their `env://NAME` references.
 */
export interface MsgappProvider {
  tenant_id: string;
  type: MsgappType;
  provider: string;
  enabled: boolean;
  base_url: string;
  api_key_ref: string | null;
  business_device_id: string | null;
  template_id: string | null;
  access_token_ref: string | null;
  phone_number_id: string | null;
  template_name: string | null;
  callback_secret_ref: string | null;
  /** The key, token or callback secret was given inline and is sealed in tenant_secrets (msgapp_provider.<field>). */
  api_key_set: boolean;
  access_token_set: boolean;
  callback_secret_set: boolean;
  updated_at: string;
}

/** The provider record's secrets: each by reference (`<field>_ref`) or inline (`<field>`, write-only, then `<field>_set`). */
export const MSGAPP_SECRETS = ['api_key', 'access_token', 'callback_secret'] as const;
export type MsgappSecret = (typeof MSGAPP_SECRETS)[number];

/** The body of `PUT /admin/msgapp-providers/{tenant_id}`. */
export interface MsgappProviderInput {
  type: MsgappType;
  provider?: string;
  enabled: boolean;
  api_key_ref?: string;
  base_url?: string;
  business_device_id?: string;
  template_id?: string;
  template_name?: string;
  phone_number_id?: string;
  access_token_ref?: string;
  callback_secret_ref?: string;
  /** Inline, write-only alternatives to the references above. */
  api_key?: string;
  access_token?: string;
  callback_secret?: string;
}

type Fields = Omit<MsgappProvider, 'tenant_id' | 'updated_at'>;

/** The inline secret a required reference may be given as instead. */
const INLINE_OF: Partial<Record<keyof MsgappProviderInput, MsgappSecret>> = { api_key_ref: 'api_key', access_token_ref: 'access_token', callback_secret_ref: 'callback_secret' };

const REFS = ['api_key_ref', 'access_token_ref', 'callback_secret_ref'] as const;
/** Which fields each type needs (when enabled) and which it must leave empty. */
const NEEDS: Record<MsgappType, { required: (keyof MsgappProviderInput)[]; empty: (keyof MsgappProviderInput)[] }> = {
  A: { required: ['api_key_ref', 'business_device_id', 'template_id', 'base_url'], empty: ['access_token_ref', 'phone_number_id', 'template_name'] },
  B: { required: ['access_token_ref', 'phone_number_id', 'template_name', 'base_url'], empty: ['api_key_ref', 'business_device_id', 'template_id'] },
  // Type C's template is fixed at the carrier (netgsm_verify_code); device id and template stay empty.
  C: { required: ['api_key_ref'], empty: ['business_device_id', 'template_id', 'template_name', 'phone_number_id', 'access_token_ref'] },
};

/**
 * Checks a PUT body against its type's rules and fills the defaults (type C:
 * provider "netgsm", the carrier's production base_url). Every problem is
 * reported at once, as validation_failed with one detail per field.
 */
export function normalizeMsgappInput(input: MsgappProviderInput): Fields {
  const details: { field: string; message: string }[] = [];
  const need = NEEDS[input.type];
  const given = (f: keyof MsgappProviderInput): boolean => Boolean(input[f]) || Boolean(INLINE_OF[f] && input[INLINE_OF[f]!]);
  for (const f of need.required) if (input.enabled && !given(f) && !(input.type === 'C' && f === 'base_url')) details.push({ field: f, message: `is required for type ${input.type}` });
  for (const f of need.empty) if (given(f)) details.push({ field: f, message: `must stay empty for type ${input.type}` });
  for (const s of MSGAPP_SECRETS) if (input[s] && input[`${s}_ref`]) details.push({ field: s, message: `and ${s}_ref exclude each other: give the secret inline or its reference` });
  for (const f of REFS) if (input[f] && !isEnvRef(input[f]!)) details.push({ field: f, message: 'must be an env://NAME reference, never the secret itself' });
  if (input.type === 'C' && input.provider !== undefined && input.provider !== 'netgsm') details.push({ field: 'provider', message: 'must be "netgsm" for type C' });
  if (input.type === 'B' && input.template_name && !/^[a-z0-9_]+:[A-Za-z_]{2,8}$/.test(input.template_name)) {
    details.push({ field: 'template_name', message: 'must have the form name:lang, e.g. wifi_code:tr' });
  }
  if (input.base_url && !/^https?:\/\/[^\s/]+/.test(input.base_url)) details.push({ field: 'base_url', message: 'must be an http(s) URL' });
  if (details.length) throw Errors.VALIDATION_FAILED(`${details[0]!.field} ${details[0]!.message}`, details);
  return {
    type: input.type,
    provider: input.type === 'C' ? 'netgsm' : (input.provider || `type_${input.type.toLowerCase()}`),
    enabled: input.enabled,
    base_url: input.base_url || (input.type === 'C' ? NETGSM_BASE_URL : ''),
    api_key_ref: input.api_key_ref || null,
    business_device_id: input.business_device_id || null,
    template_id: input.template_id || null,
    access_token_ref: input.access_token_ref || null,
    phone_number_id: input.phone_number_id || null,
    template_name: input.template_name || null,
    callback_secret_ref: input.callback_secret_ref || null,
    api_key_set: Boolean(input.api_key),
    access_token_set: Boolean(input.access_token),
    callback_secret_set: Boolean(input.callback_secret),
  };
}
