-- A change stamp for caches of query results (integration rows, export page boundaries): every statement
-- that writes one of these tables advances a sequence, whose value every instance can read at once.
-- Sequences are not transactional and take no row lock, so writers never wait on each other for it.
CREATE SEQUENCE "shipments_change_seq";
--> statement-breakpoint
CREATE FUNCTION "shipments_note_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM nextval('shipments_change_seq');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "shipments_orders_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shipments_orders" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_note_change"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_line_items_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shipments_order_line_items" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_note_change"();
--> statement-breakpoint
CREATE TRIGGER "shipments_order_addresses_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shipments_order_addresses" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_note_change"();
--> statement-breakpoint
CREATE TRIGGER "shipments_integrations_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shipments_integrations" FOR EACH STATEMENT EXECUTE FUNCTION "shipments_note_change"();
