-- A tenant's sign-in settings: which methods its hotspots offer, the SMS,
-- messaging-app and e-mail senders (credentials only as env://NAME references, never
-- values), the OTP abuse limits, allowed and blocked dial prefixes, and per-method
-- session settings. One JSON document per tenant, read through SignInSettingsService,
-- which fills in the defaults; a tenant without a row offers vouchers only.
CREATE TABLE IF NOT EXISTS sign_in_settings (
  tenant_id   text PRIMARY KEY REFERENCES tenants(id),
  settings    jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
