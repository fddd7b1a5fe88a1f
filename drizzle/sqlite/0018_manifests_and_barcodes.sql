CREATE TABLE `shipments_manifest_parcels` (
	`manifest_id` integer NOT NULL,
	`parcel_id` integer NOT NULL,
	`operation_id` text NOT NULL,
	PRIMARY KEY(`manifest_id`, `parcel_id`),
	FOREIGN KEY (`manifest_id`) REFERENCES `shipments_manifests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_manifest_parcels_operation_unique` ON `shipments_manifest_parcels` (`operation_id`);--> statement-breakpoint
CREATE INDEX `shipments_manifest_parcels_parcel_idx` ON `shipments_manifest_parcels` (`parcel_id`);--> statement-breakpoint
CREATE TABLE `shipments_manifests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`integration_id` integer NOT NULL,
	`carrier` text NOT NULL,
	`ship_from` text NOT NULL,
	`state` text NOT NULL,
	`external_id` text,
	`form_url` text,
	`parcel_count` integer NOT NULL,
	`error` text,
	`user_id` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shipments_manifests_created_idx` ON `shipments_manifests` (`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `barcode` text;