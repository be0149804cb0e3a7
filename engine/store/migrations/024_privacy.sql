-- Personal data (engine/privacy/, docs/privacy.md): data-subject requests, legal holds and the log
-- of automatic deletions.
--
-- A request names its subject (a phone, an e-mail address or a MAC) in clear only while it is open:
-- closing it clears subject_value and keeps subject_ref (a keyed hash: the same subject gives the same
-- ref, and the ref cannot be turned back into the value without the service's key) and a masked form.
CREATE TABLE IF NOT EXISTS privacy_requests (
  tenant_id       text NOT NULL REFERENCES tenants(id),
  id              text NOT NULL,                 -- dsr_...
  type            text NOT NULL CHECK (type IN ('access', 'erasure', 'correction')),
  subject_kind    text NOT NULL CHECK (subject_kind IN ('phone', 'email', 'mac')),
  subject_value   text,                          -- NULL once closed
  subject_ref     text NOT NULL,
  subject_masked  text NOT NULL,
  note            text,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  filed_at        timestamptz NOT NULL,
  due_at          timestamptz NOT NULL,
  closed_at       timestamptz,
  outcome         text,
  close_note      text,
  result          jsonb,                          -- what an erasure or correction did (counts, the hold), no personal data
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS privacy_requests_open ON privacy_requests (tenant_id, due_at) WHERE status = 'open';

-- The records an erasure could not remove because the law keeps them (Law 5651: the access log, 730
-- days): the subject's session rows carry the hold's id in sessions.legal_hold; the audit chain's
-- records go with their daily partitions. When held_until has passed, the retention job pseudonymises
-- the marked rows and sets released_at.
CREATE TABLE IF NOT EXISTS legal_holds (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  id            text NOT NULL,                   -- lgh_...
  request_id    text NOT NULL,
  subject_kind  text NOT NULL,
  subject_ref   text NOT NULL,
  reason        text NOT NULL,
  held          jsonb NOT NULL,                  -- {sessions: n, audit_records: n, last_record_at}
  created_at    timestamptz NOT NULL,
  held_until    timestamptz NOT NULL,
  released_at   timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS legal_holds_due ON legal_holds (held_until) WHERE released_at IS NULL;

ALTER TABLE sessions ADD COLUMN IF NOT EXISTS legal_hold text;
-- The hourly retention step finds rows past retention that still name a guest without scanning the
-- table: rows leave this index as they are pseudonymised (by retention, 'expired', or by a released
-- hold, 'erased-...'), so it holds about two years of sessions. Held rows stay in it: a hold does not
-- keep a row past its own end of retention.
CREATE INDEX IF NOT EXISTS sessions_retention ON sessions (started_at) WHERE mac <> 'expired' AND mac NOT LIKE 'erased-%';

-- Every deletion of personal data the service made on its own or for a request: an audit partition
-- dropped at the end of retention (one row per tenant it held), a hold released, an erasure.
CREATE TABLE IF NOT EXISTS privacy_deletions (
  id          bigserial PRIMARY KEY,
  tenant_id   text NOT NULL,
  at          timestamptz NOT NULL DEFAULT now(),
  kind        text NOT NULL CHECK (kind IN ('retention', 'hold_released', 'erasure')),
  category    text NOT NULL,                     -- audit_records, sessions, redis, blocks, ...
  rows        bigint NOT NULL,
  ref         text                                -- the partition, the hold or the request
);
CREATE INDEX IF NOT EXISTS privacy_deletions_tenant_at ON privacy_deletions (tenant_id, at);
