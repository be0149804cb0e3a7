-- The month sketches of devices (report_device_months) were kept by a trigger on report_devices
-- that merged the whole 4 KiB day sketch into the month's, register by register in PL/pgSQL, for
-- every day row a sink batch writes: 2 ms warm to 13 ms on a new connection per hotspot-day row,
-- whatever the batch's size, most of Postgres' CPU in a storm at 100 sign-ins a second
-- (bench/results/stadium-storm.md). The sink now raises the month's
-- registers itself, in the statement that raises the day's (engine/store/report-rollups.ts:
-- only the batch's own registers), and the rebuild recomputes the months it touched; each says so
-- with the transaction-local setting below, and the trigger then does nothing.
-- Expand only: a process of the previous release does not set it, so its batches are still
-- merged by the trigger, and the month sketches stay the union of the day sketches either way.
-- The contract step, once no such process is left: drop the trigger report_devices_month.
CREATE OR REPLACE FUNCTION report_devices_to_month() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('guestwifi.device_months_kept', true) = 'on' THEN RETURN NULL; END IF;
  INSERT INTO report_device_months AS m (tenant_id, hotspot_id, month, sketch)
  VALUES (NEW.tenant_id, NEW.hotspot_id, date_trunc('month', NEW.day)::date, NEW.sketch)
  ON CONFLICT (tenant_id, hotspot_id, month) DO UPDATE SET sketch = report_hll_merge(m.sketch, EXCLUDED.sketch);
  RETURN NULL;
END $$;
