CREATE TABLE `shipments_return_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`return_id` integer NOT NULL,
	`from_state` text,
	`to_state` text NOT NULL,
	`message` text,
	`user_id` text,
	`source` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`return_id`) REFERENCES `shipments_returns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_return_history_return_idx` ON `shipments_return_history` (`return_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_returns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` integer NOT NULL,
	`reference` text NOT NULL,
	`state` text NOT NULL,
	`lines` text DEFAULT '[]' NOT NULL,
	`state_message` text,
	`tracking_number` text,
	`tracking_url` text,
	`carrier` text,
	`service` text,
	`label_url` text,
	`label_format` text,
	`label_cost` text,
	`label_currency` text,
	`label_operation_id` text,
	`label_external_id` text,
	`label_integration_id` integer,
	`label_state` text,
	`date_received` integer,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shipments_returns_order_idx` ON `shipments_returns` (`order_id`,`id`);--> statement-breakpoint
CREATE INDEX `shipments_returns_state_idx` ON `shipments_returns` (`state`,`id`);--> statement-breakpoint
CREATE INDEX `shipments_returns_tracking_idx` ON `shipments_returns` (`tracking_number`);