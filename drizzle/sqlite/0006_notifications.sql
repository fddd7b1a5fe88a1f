CREATE TABLE `shipments_notifications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`statuses` text DEFAULT '[]' NOT NULL,
	`recipient` text DEFAULT 'customer' NOT NULL,
	`addresses` text DEFAULT '[]' NOT NULL,
	`subject` text NOT NULL,
	`html` text NOT NULL,
	`text` text NOT NULL,
	`language` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_tracking_links` (
	`shipment_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`shipment_id`) REFERENCES `shipments_shipments`(`id`) ON UPDATE no action ON DELETE cascade
);
