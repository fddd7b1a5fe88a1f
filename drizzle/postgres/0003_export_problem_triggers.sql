-- Why each order cannot be exported to ShipStation (spec 4.3), kept in shipments_orders.export_problem
-- (migration 0002) by triggers on the order, its addresses and its line items, so the export counts
-- and pages exportable orders on an index instead of judging every order on every request. The rule
-- lives once, in shipments_order_export_problem(); to change it, CREATE OR REPLACE it and run the
-- backfill at the end again. Re-applying this file as a whole: DROP the functions (CASCADE) first.
-- VOLATILE (the default): under READ COMMITTED each call sees what other transactions committed last.
CREATE FUNCTION "shipments_order_export_problem"(target_order integer) RETURNS text LANGUAGE sql AS $$
  SELECT CASE
    WHEN s.id IS NULL THEN 'no shipping address'
    WHEN coalesce(trim(s.full_name), '') = '' THEN 'the shipping address has no name'
    WHEN coalesce(trim(s.address1), '') = '' THEN 'the shipping address has no street'
    WHEN coalesce(trim(s.city), '') = '' THEN 'the shipping address has no city'
    WHEN coalesce(trim(s.postal_code), '') = '' THEN 'the shipping address has no postal code'
    WHEN NOT coalesce(trim(s.country_code) ~ '^[A-Za-z]{2}$', false) THEN 'the shipping country is not a 2-letter code'
    WHEN b.id IS NOT NULL AND coalesce(trim(b.full_name), '') = '' THEN 'the billing address has no name'
    WHEN b.id IS NOT NULL AND nullif(trim(b.country_code), '') IS NOT NULL AND NOT coalesce(trim(b.country_code) ~ '^[A-Za-z]{2}$', false) THEN 'the billing country is not a 2-letter code'
    WHEN NOT EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id) THEN 'no line items'
    WHEN EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id AND trim(i.name) = '') THEN 'a line item has no name'
  END
  FROM (SELECT target_order AS id) o
    LEFT JOIN shipments_order_addresses s ON s.order_id = o.id AND s.kind = 'shipping'
    LEFT JOIN shipments_order_addresses b ON b.order_id = o.id AND b.kind = 'billing'
$$;
--> statement-breakpoint
-- An order is judged as it is written (a new one has no addresses or items yet): no second row version.
CREATE FUNCTION "shipments_orders_judge_export"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.export_problem := shipments_order_export_problem(NEW.id);
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_orders_export_problem" BEFORE INSERT OR UPDATE OF id, export_problem ON "shipments_orders" FOR EACH ROW EXECUTE FUNCTION "shipments_orders_judge_export"();
--> statement-breakpoint
-- Addresses and line items: once per statement, for the orders the statement touched (bulk writes
-- judge each order once), writing only the orders whose problem changed.
CREATE FUNCTION "shipments_order_parts_judge_export"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE shipments_orders o SET export_problem = shipments_order_export_problem(o.id)
     WHERE o.id IN (SELECT order_id FROM new_rows) AND o.export_problem IS DISTINCT FROM shipments_order_export_problem(o.id);
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE shipments_orders o SET export_problem = shipments_order_export_problem(o.id)
     WHERE o.id IN (SELECT order_id FROM new_rows UNION SELECT order_id FROM old_rows) AND o.export_problem IS DISTINCT FROM shipments_order_export_problem(o.id);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE shipments_orders o SET export_problem = shipments_order_export_problem(o.id)
     WHERE o.id IN (SELECT order_id FROM old_rows) AND o.export_problem IS DISTINCT FROM shipments_order_export_problem(o.id);
  ELSE
    UPDATE shipments_orders o SET export_problem = shipments_order_export_problem(o.id)
     WHERE o.export_problem IS DISTINCT FROM shipments_order_export_problem(o.id);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_order_addresses_export_insert" AFTER INSERT ON "shipments_order_addresses" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_addresses_export_update" AFTER UPDATE ON "shipments_order_addresses" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_addresses_export_delete" AFTER DELETE ON "shipments_order_addresses" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_addresses_export_truncate" AFTER TRUNCATE ON "shipments_order_addresses" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_line_items_export_insert" AFTER INSERT ON "shipments_order_line_items" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_line_items_export_update" AFTER UPDATE ON "shipments_order_line_items" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_line_items_export_delete" AFTER DELETE ON "shipments_order_line_items" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_line_items_export_truncate" AFTER TRUNCATE ON "shipments_order_line_items" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_order_parts_judge_export"();
--> statement-breakpoint
-- The backfill: every existing order judged once.
UPDATE "shipments_orders" SET "export_problem" = shipments_order_export_problem(id);
