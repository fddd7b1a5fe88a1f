CREATE TABLE `shipments_address_checks` (
	`shipment_id` integer PRIMARY KEY NOT NULL,
	`ship_to` text,
	`verdict` text,
	`suggestion` text,
	`problems` text DEFAULT '[]' NOT NULL,
	`fingerprint` text,
	`decision` text,
	`checked_at` integer,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_customs_declarations` (
	`parcel_id` integer PRIMARY KEY NOT NULL,
	`shipment_id` integer NOT NULL,
	`contents_type` text NOT NULL,
	`contents_explanation` text,
	`non_delivery_option` text NOT NULL,
	`restriction_type` text NOT NULL,
	`restriction_comments` text,
	`signer` text,
	`incoterm` text NOT NULL,
	`eel_pfc` text,
	`certify` integer NOT NULL,
	`currency` text NOT NULL,
	`items` text NOT NULL,
	`edited` integer NOT NULL,
	`forms` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shipments_customs_declarations_shipment_idx` ON `shipments_customs_declarations` (`shipment_id`);--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `hs_tariff_number` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `origin_country` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `customs_description` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `customs_value` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `customs_currency` text;