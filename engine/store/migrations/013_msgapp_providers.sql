-- The messaging-app OTP provider (type A, B or C) of each tenant, set by the platform administration
-- (PUT /admin/msgapp-providers/{tenant_id}). Credentials are env://NAME references only: the
-- secrets themselves live in the service's environment and never in this table.
CREATE TABLE msgapp_providers (
  tenant_id            text PRIMARY KEY REFERENCES tenants(id),
  type                 text NOT NULL CHECK (type IN ('A', 'B', 'C')),
  provider             text NOT NULL,
  enabled              boolean NOT NULL,
  base_url             text NOT NULL,
  api_key_ref          text,          -- A: API key; C: usercode:password
  business_device_id   text,          -- A
  template_id          text,          -- A
  access_token_ref     text,          -- B: system-user access token
  phone_number_id      text,          -- B
  template_name        text,          -- B: name:lang
  callback_secret_ref  text,          -- the secret a delivery callback is checked with
  updated_at           timestamptz NOT NULL DEFAULT now()
);
