CREATE TABLE `shipments_attention_orders` (
	`order_id` integer PRIMARY KEY NOT NULL,
	`reference` text NOT NULL,
	`status_handle` text,
	`date_ordered` integer,
	`customer` text,
	`lines_missing` integer NOT NULL,
	`units_missing` integer NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_package_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_shipped_counts` (
	`quarter_hour` integer NOT NULL,
	`slot` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`quarter_hour`, `slot`)
);
--> statement-breakpoint
CREATE TABLE `shipments_status_counts` (
	`status` text NOT NULL,
	`slot` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`status`, `slot`)
);
--> statement-breakpoint
CREATE INDEX `shipments_external_references_failing_idx` ON `shipments_external_references` (`last_push_at`) WHERE last_push_error IS NOT NULL;--> statement-breakpoint
CREATE INDEX `shipments_shipments_late_idx` ON `shipments_shipments` (`date_scheduled_ship`,`id`) WHERE enabled = 1 AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL;