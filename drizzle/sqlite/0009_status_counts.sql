-- Shipments not deleted, by status, in shipments_status_counts (migration 0008): kept by these triggers in
-- the transaction of every write of shipments_shipments, whatever writes it, so the overview and the
-- lists read totals instead of counting every shipment. A status is spread over 8 slots (id % 8), as
-- on PostgreSQL; a total is the sum of its slots. Re-applying this file: DROP the triggers and
-- DELETE FROM shipments_status_counts first.
CREATE TRIGGER `shipments_status_counts_insert` AFTER INSERT ON `shipments_shipments` WHEN NEW.date_deleted IS NULL BEGIN
  INSERT INTO shipments_status_counts (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
    ON CONFLICT (status, slot) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_status_counts_update` AFTER UPDATE OF status, date_deleted ON `shipments_shipments`
WHEN OLD.status IS NOT NEW.status OR (OLD.date_deleted IS NULL) <> (NEW.date_deleted IS NULL) BEGIN
  UPDATE shipments_status_counts SET count = count - 1 WHERE OLD.date_deleted IS NULL AND status = OLD.status AND slot = OLD.id % 8;
  INSERT INTO shipments_status_counts (status, slot, count) SELECT NEW.status, NEW.id % 8, 1 WHERE NEW.date_deleted IS NULL
    ON CONFLICT (status, slot) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_status_counts_delete` AFTER DELETE ON `shipments_shipments` WHEN OLD.date_deleted IS NULL BEGIN
  UPDATE shipments_status_counts SET count = count - 1 WHERE status = OLD.status AND slot = OLD.id % 8;
END;
--> statement-breakpoint
-- The counts of the shipments already there: one pass over the table, once.
INSERT INTO shipments_status_counts (status, slot, count)
  SELECT status, id % 8, count(*) FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status, id % 8;
