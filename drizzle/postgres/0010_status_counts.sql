-- Shipments not deleted, by status, in shipments_status_counts (migration 0009): kept by this trigger in
-- the transaction of every write of shipments_shipments, whatever writes it, so the overview and the
-- lists read totals instead of counting every shipment. A status is spread over 8 slots (id % 8): two
-- transactions changing shipments of the same status wait for each other's commit only when their ids
-- share a slot. A total is the sum of its slots. Re-applying this file: DROP FUNCTION
-- shipments_count_statuses() CASCADE and DELETE FROM shipments_status_counts first.
CREATE FUNCTION "shipments_count_statuses"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.date_deleted IS NULL THEN
    UPDATE shipments_status_counts SET count = count - 1 WHERE status = OLD.status AND slot = OLD.id % 8;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.date_deleted IS NULL THEN
    INSERT INTO shipments_status_counts AS c (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + 1;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_status_counts_insert_delete" AFTER INSERT OR DELETE ON "shipments_shipments"
  FOR EACH ROW EXECUTE FUNCTION "shipments_count_statuses"();
--> statement-breakpoint
CREATE TRIGGER "shipments_status_counts_update" AFTER UPDATE OF status, date_deleted ON "shipments_shipments"
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR (OLD.date_deleted IS NULL) <> (NEW.date_deleted IS NULL))
  EXECUTE FUNCTION "shipments_count_statuses"();
--> statement-breakpoint
-- The counts of the shipments already there: one pass over the table, once.
INSERT INTO shipments_status_counts (status, slot, count)
  SELECT status, id % 8, count(*) FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status, id % 8;
