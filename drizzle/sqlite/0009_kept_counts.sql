-- Totals kept in the transaction of every write of shipments_shipments, whatever writes it, so the
-- overview and the lists read them instead of counting shipments (tables of migration 0008):
-- shipments_status_counts: shipments not deleted, by status; shipments_shipped_counts: shipments not
-- deleted that shipped, by quarter hour since the epoch (date_shipped / 900000). Each is spread over 8
-- slots (id % 8), as on PostgreSQL; a total is the sum of its slots. Re-applying this file: DROP the
-- triggers and DELETE FROM both tables first.
CREATE TRIGGER `shipments_kept_counts_insert` AFTER INSERT ON `shipments_shipments` WHEN NEW.date_deleted IS NULL BEGIN
  INSERT INTO shipments_status_counts (status, slot, count) VALUES (NEW.status, NEW.id % 8, 1)
    ON CONFLICT (status, slot) DO UPDATE SET count = count + 1;
  INSERT INTO shipments_shipped_counts (quarter_hour, slot, count) SELECT NEW.date_shipped / 900000, NEW.id % 8, 1 WHERE NEW.date_shipped IS NOT NULL
    ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_status_counts_update` AFTER UPDATE OF status, date_deleted ON `shipments_shipments`
WHEN OLD.status IS NOT NEW.status OR (OLD.date_deleted IS NULL) <> (NEW.date_deleted IS NULL) BEGIN
  UPDATE shipments_status_counts SET count = count - 1 WHERE OLD.date_deleted IS NULL AND status = OLD.status AND slot = OLD.id % 8;
  INSERT INTO shipments_status_counts (status, slot, count) SELECT NEW.status, NEW.id % 8, 1 WHERE NEW.date_deleted IS NULL
    ON CONFLICT (status, slot) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_shipped_counts_update` AFTER UPDATE OF date_shipped, date_deleted ON `shipments_shipments`
WHEN OLD.date_shipped IS NOT NEW.date_shipped OR (OLD.date_deleted IS NULL) <> (NEW.date_deleted IS NULL) BEGIN
  UPDATE shipments_shipped_counts SET count = count - 1
    WHERE OLD.date_deleted IS NULL AND OLD.date_shipped IS NOT NULL AND quarter_hour = OLD.date_shipped / 900000 AND slot = OLD.id % 8;
  INSERT INTO shipments_shipped_counts (quarter_hour, slot, count) SELECT NEW.date_shipped / 900000, NEW.id % 8, 1
    WHERE NEW.date_deleted IS NULL AND NEW.date_shipped IS NOT NULL
    ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_kept_counts_delete` AFTER DELETE ON `shipments_shipments` WHEN OLD.date_deleted IS NULL BEGIN
  UPDATE shipments_status_counts SET count = count - 1 WHERE status = OLD.status AND slot = OLD.id % 8;
  UPDATE shipments_shipped_counts SET count = count - 1
    WHERE OLD.date_shipped IS NOT NULL AND quarter_hour = OLD.date_shipped / 900000 AND slot = OLD.id % 8;
END;
--> statement-breakpoint
-- The totals of the shipments already there: one pass over the table each, once.
INSERT INTO shipments_status_counts (status, slot, count)
  SELECT status, id % 8, count(*) FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status, id % 8;
--> statement-breakpoint
INSERT INTO shipments_shipped_counts (quarter_hour, slot, count)
  SELECT date_shipped / 900000, id % 8, count(*) FROM shipments_shipments
  WHERE date_deleted IS NULL AND date_shipped IS NOT NULL GROUP BY date_shipped / 900000, id % 8;
