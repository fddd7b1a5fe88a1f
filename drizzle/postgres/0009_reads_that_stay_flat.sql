CREATE TABLE "shipments_attention_orders" (
	"order_id" integer PRIMARY KEY NOT NULL,
	"reference" text NOT NULL,
	"status_handle" text,
	"date_ordered" timestamp (3) with time zone,
	"customer" text,
	"lines_missing" integer NOT NULL,
	"units_missing" integer NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shipments_package_state" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shipments_shipped_counts" (
	"quarter_hour" integer NOT NULL,
	"slot" integer NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "shipments_shipped_counts_quarter_hour_slot_pk" PRIMARY KEY("quarter_hour","slot")
);
--> statement-breakpoint
CREATE TABLE "shipments_status_counts" (
	"status" text NOT NULL,
	"slot" integer NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "shipments_status_counts_status_slot_pk" PRIMARY KEY("status","slot")
);
--> statement-breakpoint
CREATE INDEX "shipments_external_references_failing_idx" ON "shipments_external_references" USING btree ("last_push_at") WHERE last_push_error IS NOT NULL;--> statement-breakpoint
CREATE INDEX "shipments_shipments_late_idx" ON "shipments_shipments" USING btree ("date_scheduled_ship","id") WHERE enabled AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL;