CREATE TABLE `shipments_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_id` text NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`ordering_key` text NOT NULL,
	`payload` text DEFAULT '{}' NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`available_at` integer NOT NULL,
	`claimed_until` integer,
	`claimed_by` text,
	`last_error` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`done_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_outbox_message_unique` ON `shipments_outbox` (`message_id`);--> statement-breakpoint
CREATE INDEX `shipments_outbox_pending_idx` ON `shipments_outbox` (`available_at`,`id`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `shipments_outbox_pending_key_idx` ON `shipments_outbox` (`ordering_key`,`id`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `shipments_outbox_done_idx` ON `shipments_outbox` (`done_at`);--> statement-breakpoint
CREATE TABLE `shipments_outbox_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`outbox_id` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	FOREIGN KEY (`outbox_id`) REFERENCES `shipments_outbox`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_outbox_attempts_outbox_idx` ON `shipments_outbox_attempts` (`outbox_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_webhook_subscriptions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`url` text NOT NULL,
	`events` text DEFAULT '[]' NOT NULL,
	`secret` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT true NOT NULL,
	`failure_count` integer DEFAULT 0 NOT NULL,
	`disabled_reason` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `shipments_integrations` ADD `outbound_status_map` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `shipments_integrations` ADD `push_on` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `shipments_external_references` ADD `last_push_at` integer;--> statement-breakpoint
ALTER TABLE `shipments_external_references` ADD `last_push_error` text;--> statement-breakpoint
ALTER TABLE `shipments_external_references` ADD `push_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `shipments_shipments` ADD `status_before_order_cancel` text;