CREATE TABLE `shipments_checkpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`shipment_id` integer NOT NULL,
	`parcel_id` integer,
	`tracking_number` text NOT NULL,
	`source` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`occurred_at_text` text NOT NULL,
	`message` text,
	`location` text,
	`status` text,
	`sub_status` text,
	`signed_by` text,
	`dedupe_key` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_checkpoints_dedupe_unique` ON `shipments_checkpoints` (`shipment_id`,`dedupe_key`);--> statement-breakpoint
CREATE INDEX `shipments_checkpoints_shipment_idx` ON `shipments_checkpoints` (`shipment_id`,`occurred_at`,`id`);--> statement-breakpoint
ALTER TABLE `shipments_notifications` ADD `triggers` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `shipments_shipments` ADD `estimated_delivery` text;--> statement-breakpoint
ALTER TABLE `shipments_shipments` ADD `estimated_delivery_source` text;