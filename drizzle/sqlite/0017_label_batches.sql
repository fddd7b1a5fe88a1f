CREATE TABLE `shipments_label_batch_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`batch_id` integer NOT NULL,
	`position` integer NOT NULL,
	`shipment_id` integer NOT NULL,
	`parcel_id` integer,
	`state` text NOT NULL,
	`rule` text,
	`carrier` text,
	`service` text,
	`operation_id` text,
	`reason` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`batch_id`) REFERENCES `shipments_label_batches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_label_batch_items_batch_idx` ON `shipments_label_batch_items` (`batch_id`,`state`,`position`);--> statement-breakpoint
CREATE INDEX `shipments_label_batch_items_parcel_idx` ON `shipments_label_batch_items` (`parcel_id`);--> statement-breakpoint
CREATE TABLE `shipments_label_batches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`state` text NOT NULL,
	`settings` text NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`user_id` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `shipments_label_batches_state_idx` ON `shipments_label_batches` (`state`,`id`);