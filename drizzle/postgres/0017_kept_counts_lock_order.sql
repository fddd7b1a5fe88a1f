-- The kept totals' rows in one order in every transaction: two changes moving shipments of one slot in
-- opposite directions (shipped to on hold and on hold to shipped, as carriers' events do) took the same
-- two rows of shipments_status_counts in opposite orders and deadlocked. Now the status rows are taken
-- in the order of their status, then the quarter hours in theirs, and status rows always before
-- quarter-hour rows. The totals are the same as before.
CREATE OR REPLACE FUNCTION "shipments_keep_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  status_out boolean := false;
  status_in boolean := false;
  shipped_out boolean := false;
  shipped_in boolean := false;
  quarter_out integer;
  quarter_in integer;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.date_deleted IS NULL THEN
    IF TG_OP = 'DELETE' OR OLD.status IS DISTINCT FROM NEW.status OR NEW.date_deleted IS NOT NULL THEN
      status_out := true;
    END IF;
    IF OLD.date_shipped IS NOT NULL AND (TG_OP = 'DELETE' OR OLD.date_shipped IS DISTINCT FROM NEW.date_shipped OR NEW.date_deleted IS NOT NULL) THEN
      shipped_out := true;
      quarter_out := shipments_quarter_hour(OLD.date_shipped);
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.date_deleted IS NULL THEN
    IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status OR OLD.date_deleted IS NOT NULL THEN
      status_in := true;
    END IF;
    IF NEW.date_shipped IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.date_shipped IS DISTINCT FROM NEW.date_shipped OR OLD.date_deleted IS NOT NULL) THEN
      shipped_in := true;
      quarter_in := shipments_quarter_hour(NEW.date_shipped);
    END IF;
  END IF;

  -- Status rows: the lower status first when both move.
  IF status_out AND status_in AND NEW.status < OLD.status THEN
    INSERT INTO shipments_status_counts AS c (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + 1;
    status_in := false;
  END IF;
  IF status_out THEN
    UPDATE shipments_status_counts SET count = count - 1 WHERE status = OLD.status AND slot = OLD.id % 8;
  END IF;
  IF status_in THEN
    INSERT INTO shipments_status_counts AS c (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + 1;
  END IF;

  -- Quarter-hour rows: the earlier quarter hour first when both move.
  IF shipped_out AND shipped_in AND quarter_in < quarter_out THEN
    INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count) VALUES (quarter_in, NEW.id % 8, 1)
      ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + 1;
    shipped_in := false;
  END IF;
  IF shipped_out THEN
    UPDATE shipments_shipped_counts SET count = count - 1 WHERE quarter_hour = quarter_out AND slot = OLD.id % 8;
  END IF;
  IF shipped_in THEN
    INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count) VALUES (quarter_in, NEW.id % 8, 1)
      ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + 1;
  END IF;
  RETURN NULL;
END
$$;
