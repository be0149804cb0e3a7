-- A session's extension that reached Postgres before its start, as session_ends_early
-- does for ends: its UPDATE found no sessions row (the start still with another
-- consumer, or committed after the UPDATE's snapshot). It waits here and the sink's
-- periodic pass applies it. One row per session: the latest planned end. Normally empty.
CREATE TABLE IF NOT EXISTS session_extends_early (
  id         text PRIMARY KEY,             -- the session id
  tenant_id  text NOT NULL,
  until      timestamptz NOT NULL,
  queued_at  timestamptz NOT NULL DEFAULT now()
);
