import type { MsgappProviderInput } from '../../engine/index.js';
import { oneOf, requestSchema, secret } from '../schemas.js';

const text = (maxLength: number, description?: string) => ({ type: 'string', maxLength, ...(description ? { description } : {}) } as const);

/**
 * A tenant's messaging-app provider. Credentials as env://NAME references or inline (write-only:
 * sealed under SECRETS_KEY, answered as `<field>_set`); which fields a type needs is checked by the engine.
 */
export const msgappProviderPut = requestSchema<MsgappProviderInput>('msgappProviderPut', {
  type: 'object', additionalProperties: false, required: ['type', 'enabled'],
  properties: {
    type: oneOf(['A', 'B', 'C'] as const),
    provider: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' },
    enabled: { type: 'boolean' },
    api_key_ref: text(140, 'A: the API key; C: usercode:password'),
    base_url: text(500, "Type C default: the carrier's production address"),
    business_device_id: text(128),
    template_id: text(128),
    template_name: text(128, 'B: name:lang'),
    phone_number_id: text(64),
    access_token_ref: text(140),
    callback_secret_ref: text(140, 'Secret the delivery callback is checked with'),
    api_key: secret(text(2000, 'api_key_ref given inline; write-only')),
    access_token: secret(text(4000, 'access_token_ref given inline; write-only')),
    callback_secret: secret(text(2000, 'callback_secret_ref given inline; write-only')),
  },
});
