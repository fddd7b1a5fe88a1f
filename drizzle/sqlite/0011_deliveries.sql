CREATE TABLE `shipments_boxes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`inner_length` text NOT NULL,
	`inner_width` text NOT NULL,
	`inner_height` text NOT NULL,
	`dimension_unit` text NOT NULL,
	`empty_weight` text NOT NULL,
	`max_weight` text NOT NULL,
	`weight_unit` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_label_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`operation_id` text NOT NULL,
	`step` text NOT NULL,
	`request` text DEFAULT '{}' NOT NULL,
	`response` text DEFAULT '{}' NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shipments_label_attempts_operation_idx` ON `shipments_label_attempts` (`operation_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_label_operations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`operation_id` text NOT NULL,
	`parcel_id` integer NOT NULL,
	`shipment_id` integer NOT NULL,
	`integration_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`quote_id` integer,
	`carrier` text NOT NULL,
	`service` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`external_id` text,
	`error` text,
	`user_id` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`parcel_id`) REFERENCES `shipments_parcels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_label_operations_operation_unique` ON `shipments_label_operations` (`operation_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_label_operations_active_unique` ON `shipments_label_operations` (`parcel_id`) WHERE state in ('pending', 'purchased');--> statement-breakpoint
CREATE INDEX `shipments_label_operations_parcel_idx` ON `shipments_label_operations` (`parcel_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_parcel_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`parcel_id` integer NOT NULL,
	`shipment_id` integer NOT NULL,
	`action` text NOT NULL,
	`message` text,
	`user_id` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`parcel_id`) REFERENCES `shipments_parcels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_parcel_history_parcel_idx` ON `shipments_parcel_history` (`parcel_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_parcels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`shipment_id` integer NOT NULL,
	`weight` text NOT NULL,
	`weight_unit` text NOT NULL,
	`length` text,
	`width` text,
	`height` text,
	`dimension_unit` text,
	`box_id` integer,
	`items` text DEFAULT '[]' NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`tracking_number` text,
	`tracking_url` text,
	`carrier` text,
	`service` text,
	`label_url` text,
	`label_format` text,
	`label_cost` text,
	`label_currency` text,
	`label_operation_id` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`box_id`) REFERENCES `shipments_boxes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `shipments_parcels_shipment_idx` ON `shipments_parcels` (`shipment_id`,`id`);--> statement-breakpoint
CREATE INDEX `shipments_parcels_tracking_idx` ON `shipments_parcels` (`tracking_number`);--> statement-breakpoint
CREATE TABLE `shipments_rate_quotes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`shipment_id` integer NOT NULL,
	`parcel_id` integer NOT NULL,
	`integration_id` integer NOT NULL,
	`carrier` text NOT NULL,
	`service` text NOT NULL,
	`amount` text NOT NULL,
	`currency` text NOT NULL,
	`delivery_days` integer,
	`delivery_date` text,
	`external_rate_id` text,
	`fingerprint` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`parcel_id`) REFERENCES `shipments_parcels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_rate_quotes_parcel_idx` ON `shipments_rate_quotes` (`parcel_id`,`id`);--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `length` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `width` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `height` text;--> statement-breakpoint
ALTER TABLE `shipments_order_line_items` ADD `dimension_unit` text;