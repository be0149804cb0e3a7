-- The captive portal page's settings per hotspot (branding, terms, methods shown, gateway kind)
-- and the hotspot's UAM secret. The secret has a column of its own, outside the settings the
-- API returns, so no query that reads settings for an answer can leak it.
ALTER TABLE hotspots ADD COLUMN IF NOT EXISTS portal jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE hotspots ADD COLUMN IF NOT EXISTS uam_secret text;
