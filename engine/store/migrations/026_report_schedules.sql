-- Scheduled report e-mail (engine/schedules/, docs/reports.md "Scheduled e-mail").
--
-- A schedule sends one mail per period (daily, weekly, monthly) to its recipients. Every engine
-- process runs the scheduler; a period is sent exactly once across them because its run row is
-- unique per (schedule_id, period_start) and a process sends only a run it holds under a lease.
CREATE TABLE IF NOT EXISTS report_schedules (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  id            text NOT NULL,                   -- rsc_...
  name          text NOT NULL DEFAULT '',
  frequency     text NOT NULL CHECK (frequency IN ('daily', 'weekly', 'monthly')),
  recipients    text[] NOT NULL,
  hotspot_id    text,                            -- NULL: every hotspot of the tenant, in the tenant's zone
  content       text NOT NULL CHECK (content IN ('report', 'compliance')),
  lang          text NOT NULL CHECK (lang IN ('tr', 'en')),
  created_at    timestamptz NOT NULL,
  -- The due time of the latest period recorded as a run (sent, to send, or skipped): periods are
  -- looked for after it (after created_at before the first).
  last_due_at   timestamptz,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id)
);

CREATE TABLE IF NOT EXISTS report_schedule_runs (
  schedule_id   text NOT NULL REFERENCES report_schedules(id) ON DELETE CASCADE,
  tenant_id     text NOT NULL,
  period_start  date NOT NULL,                   -- local dates of the schedule's zone, both included
  period_end    date NOT NULL,
  due_at        timestamptz NOT NULL,            -- 08:00 local of the day the period is sent
  time_zone     text NOT NULL,
  -- due: to send; sending: held by claimed_by until lease_until; sent; failed (retried at retry_at
  -- while attempts < the cap); skipped (older than the catch-up cap).
  status        text NOT NULL CHECK (status IN ('due', 'sending', 'sent', 'failed', 'skipped')),
  attempts      integer NOT NULL DEFAULT 0,
  claimed_by    text,
  lease_until   timestamptz,
  retry_at      timestamptz,
  late          boolean,                         -- the latest attempt started over 15 minutes after due_at (its mail says so)
  sent_at       timestamptz,
  message_id    text,
  error         text,
  PRIMARY KEY (schedule_id, period_start)
);
-- The scheduler's queue: runs still to send, oldest due first, across every tenant.
CREATE INDEX IF NOT EXISTS report_schedule_runs_open ON report_schedule_runs (due_at) WHERE status IN ('due', 'sending', 'failed');
