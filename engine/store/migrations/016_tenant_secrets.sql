-- Tenant secrets given inline (write-only) in the sign-in settings: a provider's credentials, a
-- tenant's SMTP URL, a messaging-app key. Never plaintext: AES-256-GCM under SECRETS_KEY
-- (engine/secrets/secret-box.ts), with the id of the key that sealed each row beside it so that
-- `cli secrets rotate` can find and re-seal rows under a new key. `name` is the settings field
-- (sms.credentials, email.smtp_url, msgapp_provider.*); it is also the GCM additional data with the
-- tenant id, so a row copied to another tenant or field does not open.
CREATE TABLE tenant_secrets (
  tenant_id   text NOT NULL REFERENCES tenants(id),
  name        text NOT NULL,
  key_id      text NOT NULL,
  nonce       bytea NOT NULL,
  ciphertext  bytea NOT NULL,   -- with the 16-byte GCM tag appended
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);
CREATE INDEX tenant_secrets_key_id ON tenant_secrets (key_id);

-- The platform's messaging-app provider records may hold their keys inline too (PUT
-- /admin/msgapp-providers/{tenant_id}: api_key, access_token, callback_secret), sealed in
-- tenant_secrets as msgapp_provider.<field>; these columns say which are, for the answers.
ALTER TABLE msgapp_providers
  ADD COLUMN api_key_set boolean NOT NULL DEFAULT false,
  ADD COLUMN access_token_set boolean NOT NULL DEFAULT false,
  ADD COLUMN callback_secret_set boolean NOT NULL DEFAULT false;
