CREATE TABLE "shipments_address_checks" (
	"shipment_id" integer PRIMARY KEY NOT NULL,
	"ship_to" jsonb,
	"verdict" text,
	"suggestion" jsonb,
	"problems" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"fingerprint" text,
	"decision" text,
	"checked_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shipments_customs_declarations" (
	"parcel_id" integer PRIMARY KEY NOT NULL,
	"shipment_id" integer NOT NULL,
	"contents_type" text NOT NULL,
	"contents_explanation" text,
	"non_delivery_option" text NOT NULL,
	"restriction_type" text NOT NULL,
	"restriction_comments" text,
	"signer" text,
	"incoterm" text NOT NULL,
	"eel_pfc" text,
	"certify" boolean NOT NULL,
	"currency" text NOT NULL,
	"items" jsonb NOT NULL,
	"edited" boolean NOT NULL,
	"forms" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "shipments_order_line_items" ADD COLUMN "hs_tariff_number" text;--> statement-breakpoint
ALTER TABLE "shipments_order_line_items" ADD COLUMN "origin_country" text;--> statement-breakpoint
ALTER TABLE "shipments_order_line_items" ADD COLUMN "customs_description" text;--> statement-breakpoint
ALTER TABLE "shipments_order_line_items" ADD COLUMN "customs_value" text;--> statement-breakpoint
ALTER TABLE "shipments_order_line_items" ADD COLUMN "customs_currency" text;--> statement-breakpoint
CREATE INDEX "shipments_customs_declarations_shipment_idx" ON "shipments_customs_declarations" USING btree ("shipment_id");