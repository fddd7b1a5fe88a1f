-- Totals kept in the transaction of every write of shipments_shipments, whatever writes it, so the
-- overview and the lists read them instead of counting shipments (tables of migration 0009):
-- shipments_status_counts: shipments not deleted, by status; shipments_shipped_counts: shipments not
-- deleted that shipped, by quarter hour since the epoch. Each is spread over 8 slots (id % 8): two
-- transactions changing shipments of the same status (or shipping in the same quarter hour) wait for
-- each other's commit only when their ids share a slot. A total is the sum of its slots. Re-applying
-- this file: DROP FUNCTION shipments_keep_counts() CASCADE and DELETE FROM both tables first.
CREATE FUNCTION "shipments_quarter_hour"(at timestamptz) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM at) / 900)::integer
$$;
--> statement-breakpoint
CREATE FUNCTION "shipments_keep_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.date_deleted IS NULL THEN
    IF TG_OP = 'DELETE' OR OLD.status IS DISTINCT FROM NEW.status OR NEW.date_deleted IS NOT NULL THEN
      UPDATE shipments_status_counts SET count = count - 1 WHERE status = OLD.status AND slot = OLD.id % 8;
    END IF;
    IF OLD.date_shipped IS NOT NULL AND (TG_OP = 'DELETE' OR OLD.date_shipped IS DISTINCT FROM NEW.date_shipped OR NEW.date_deleted IS NOT NULL) THEN
      UPDATE shipments_shipped_counts SET count = count - 1 WHERE quarter_hour = shipments_quarter_hour(OLD.date_shipped) AND slot = OLD.id % 8;
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.date_deleted IS NULL THEN
    IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status OR OLD.date_deleted IS NOT NULL THEN
      INSERT INTO shipments_status_counts AS c (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
        ON CONFLICT (status, slot) DO UPDATE SET count = c.count + 1;
    END IF;
    IF NEW.date_shipped IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.date_shipped IS DISTINCT FROM NEW.date_shipped OR OLD.date_deleted IS NOT NULL) THEN
      INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count) VALUES (shipments_quarter_hour(NEW.date_shipped), NEW.id % 8, 1)
        ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + 1;
    END IF;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_kept_counts_insert_delete" AFTER INSERT OR DELETE ON "shipments_shipments"
  FOR EACH ROW EXECUTE FUNCTION "shipments_keep_counts"();
--> statement-breakpoint
CREATE TRIGGER "shipments_kept_counts_update" AFTER UPDATE OF status, date_shipped, date_deleted ON "shipments_shipments"
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.date_shipped IS DISTINCT FROM NEW.date_shipped
    OR (OLD.date_deleted IS NULL) <> (NEW.date_deleted IS NULL))
  EXECUTE FUNCTION "shipments_keep_counts"();
--> statement-breakpoint
-- The totals of the shipments already there: one pass over the table each, once.
INSERT INTO shipments_status_counts (status, slot, count)
  SELECT status, id % 8, count(*) FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status, id % 8;
--> statement-breakpoint
INSERT INTO shipments_shipped_counts (quarter_hour, slot, count)
  SELECT shipments_quarter_hour(date_shipped), id % 8, count(*) FROM shipments_shipments
  WHERE date_deleted IS NULL AND date_shipped IS NOT NULL GROUP BY 1, 2;
