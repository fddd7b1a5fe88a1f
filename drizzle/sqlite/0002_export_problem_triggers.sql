-- Why each order cannot be exported to ShipStation (spec 4.3), kept in shipments_orders.export_problem
-- (migration 0001) by triggers on the order, its addresses and its line items, so the export counts
-- and pages exportable orders on an index instead of judging every order on every request. The rule
-- lives once, in the view; to change it, recreate the view and run the backfill at the end again.
-- Re-applying this file as a whole: DROP VIEW and DROP TRIGGER of the names below first.
CREATE VIEW `shipments_order_export_problems` AS
SELECT o.id AS order_id, CASE
  WHEN s.id IS NULL THEN 'no shipping address'
  WHEN coalesce(trim(s.full_name), '') = '' THEN 'the shipping address has no name'
  WHEN coalesce(trim(s.address1), '') = '' THEN 'the shipping address has no street'
  WHEN coalesce(trim(s.city), '') = '' THEN 'the shipping address has no city'
  WHEN coalesce(trim(s.postal_code), '') = '' THEN 'the shipping address has no postal code'
  WHEN NOT coalesce(trim(s.country_code) GLOB '[A-Za-z][A-Za-z]', 0) THEN 'the shipping country is not a 2-letter code'
  WHEN b.id IS NOT NULL AND coalesce(trim(b.full_name), '') = '' THEN 'the billing address has no name'
  WHEN b.id IS NOT NULL AND nullif(trim(b.country_code), '') IS NOT NULL AND NOT coalesce(trim(b.country_code) GLOB '[A-Za-z][A-Za-z]', 0) THEN 'the billing country is not a 2-letter code'
  WHEN NOT EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id) THEN 'no line items'
  WHEN EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id AND trim(i.name) = '') THEN 'a line item has no name'
END AS problem
FROM shipments_orders o
  LEFT JOIN shipments_order_addresses s ON s.order_id = o.id AND s.kind = 'shipping'
  LEFT JOIN shipments_order_addresses b ON b.order_id = o.id AND b.kind = 'billing';
--> statement-breakpoint
CREATE TRIGGER `shipments_orders_export_problem_insert` AFTER INSERT ON `shipments_orders` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = NEW.id;
END;
--> statement-breakpoint
-- A write of the column itself is put right again (and the guard ends the recursion when recursive triggers are on).
CREATE TRIGGER `shipments_orders_export_problem_update` AFTER UPDATE OF id, export_problem ON `shipments_orders`
WHEN NEW.export_problem IS NOT (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = NEW.id) BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_addresses_export_problem_insert` AFTER INSERT ON `shipments_order_addresses` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = NEW.order_id;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_addresses_export_problem_update` AFTER UPDATE ON `shipments_order_addresses` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id IN (OLD.order_id, NEW.order_id);
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_addresses_export_problem_delete` AFTER DELETE ON `shipments_order_addresses` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = OLD.order_id;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_line_items_export_problem_insert` AFTER INSERT ON `shipments_order_line_items` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = NEW.order_id;
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_line_items_export_problem_update` AFTER UPDATE ON `shipments_order_line_items` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id IN (OLD.order_id, NEW.order_id);
END;
--> statement-breakpoint
CREATE TRIGGER `shipments_order_line_items_export_problem_delete` AFTER DELETE ON `shipments_order_line_items` BEGIN
  UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id) WHERE id = OLD.order_id;
END;
--> statement-breakpoint
-- The backfill: every existing order judged once.
UPDATE shipments_orders SET export_problem = (SELECT problem FROM shipments_order_export_problems p WHERE p.order_id = shipments_orders.id);
