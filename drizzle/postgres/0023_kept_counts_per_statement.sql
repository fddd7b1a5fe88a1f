-- The kept totals once per statement, from its transition tables, instead of once per row. Row by row,
-- a statement writing N shipments updated the same few total rows N times in one transaction; every
-- update of a row made a new version that the next one had to walk past (versions made by the running
-- transaction cannot be pruned), so a host importing a million shipments in one INSERT ... SELECT paid
-- the square of the rows and ran for more than 14 minutes without finishing. Now a statement adds up
-- what it changed per total row (the shipments it wrote counted out as they were, in as they are) and
-- writes each total row once: a bulk write of N rows costs in proportion to N, and a one-row change
-- still writes the one or two rows it moves. The rows are written in the order of their keys (status
-- rows before quarter-hour rows), as 0017 took them, so two changes never take them in opposite orders.
-- UPDATE triggers with transition tables cannot name columns: the function leaves at once when the
-- statement moved no total (an update of other columns), with one look at its rows.
DROP TRIGGER "shipments_kept_counts_insert_delete" ON "shipments_shipments";
--> statement-breakpoint
DROP TRIGGER "shipments_kept_counts_update" ON "shipments_shipments";
--> statement-breakpoint
DROP FUNCTION "shipments_keep_counts"();
--> statement-breakpoint
CREATE FUNCTION "shipments_keep_counts_per_statement"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO shipments_status_counts AS c (status, slot, count)
      SELECT status, id % 8, count(*) FROM new_rows WHERE date_deleted IS NULL GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + excluded.count;
    INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count)
      SELECT shipments_quarter_hour(date_shipped), id % 8, count(*) FROM new_rows
      WHERE date_deleted IS NULL AND date_shipped IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + excluded.count;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO shipments_status_counts AS c (status, slot, count)
      SELECT status, id % 8, -count(*) FROM old_rows WHERE date_deleted IS NULL GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + excluded.count;
    INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count)
      SELECT shipments_quarter_hour(date_shipped), id % 8, -count(*) FROM old_rows
      WHERE date_deleted IS NULL AND date_shipped IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + excluded.count;
  ELSE
    IF NOT EXISTS (
      SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE o.status IS DISTINCT FROM n.status OR o.date_shipped IS DISTINCT FROM n.date_shipped
         OR (o.date_deleted IS NULL) <> (n.date_deleted IS NULL)
    ) THEN
      RETURN NULL;
    END IF;
    INSERT INTO shipments_status_counts AS c (status, slot, count)
      SELECT status, slot, sum(delta) FROM (
        SELECT status, id % 8 AS slot, 1 AS delta FROM new_rows WHERE date_deleted IS NULL
        UNION ALL
        SELECT status, id % 8, -1 FROM old_rows WHERE date_deleted IS NULL
      ) moved GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
      ON CONFLICT (status, slot) DO UPDATE SET count = c.count + excluded.count;
    INSERT INTO shipments_shipped_counts AS c (quarter_hour, slot, count)
      SELECT quarter_hour, slot, sum(delta) FROM (
        SELECT shipments_quarter_hour(date_shipped) AS quarter_hour, id % 8 AS slot, 1 AS delta FROM new_rows
        WHERE date_deleted IS NULL AND date_shipped IS NOT NULL
        UNION ALL
        SELECT shipments_quarter_hour(date_shipped), id % 8, -1 FROM old_rows
        WHERE date_deleted IS NULL AND date_shipped IS NOT NULL
      ) moved GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
      ON CONFLICT (quarter_hour, slot) DO UPDATE SET count = c.count + excluded.count;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_kept_counts_insert" AFTER INSERT ON "shipments_shipments"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_keep_counts_per_statement"();
--> statement-breakpoint
CREATE TRIGGER "shipments_kept_counts_update" AFTER UPDATE ON "shipments_shipments"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_keep_counts_per_statement"();
--> statement-breakpoint
CREATE TRIGGER "shipments_kept_counts_delete" AFTER DELETE ON "shipments_shipments"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_keep_counts_per_statement"();
