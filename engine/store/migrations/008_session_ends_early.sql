-- A session's end that reached Postgres before its start. With more than one sink
-- consumer (two engine processes, or one taking over a dead one's pending entries)
-- the end can commit first; its UPDATE then finds no sessions row. It waits here,
-- and the start's insert applies it. Normally empty.
CREATE TABLE IF NOT EXISTS session_ends_early (
  id         text PRIMARY KEY,             -- the session id
  tenant_id  text NOT NULL,
  ended_at   timestamptz NOT NULL,
  end_reason text NOT NULL,
  bytes_in   bigint NOT NULL,
  bytes_out  bigint NOT NULL,
  queued_at  timestamptz NOT NULL DEFAULT now()
);
