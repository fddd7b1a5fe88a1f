CREATE TABLE `shipments_integrations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`handle` text NOT NULL,
	`enabled` text DEFAULT 'true' NOT NULL,
	`provider_id` text,
	`settings` text DEFAULT '{}' NOT NULL,
	`status_map` text DEFAULT '{}' NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_integrations_handle_unique` ON `shipments_integrations` (`handle`);--> statement-breakpoint
CREATE TABLE `shipments_order_addresses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` integer NOT NULL,
	`kind` text NOT NULL,
	`full_name` text,
	`company` text,
	`address1` text,
	`address2` text,
	`city` text,
	`state` text,
	`postal_code` text,
	`country_code` text,
	`phone` text,
	`email` text,
	FOREIGN KEY (`order_id`) REFERENCES `shipments_orders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_order_addresses_order_kind_unique` ON `shipments_order_addresses` (`order_id`,`kind`);--> statement-breakpoint
CREATE TABLE `shipments_order_advances` (
	`order_id` integer PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `shipments_order_line_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` integer NOT NULL,
	`sku` text,
	`name` text NOT NULL,
	`weight` real,
	`weight_unit` text,
	`quantity` integer DEFAULT 1 NOT NULL,
	`price` text DEFAULT '0' NOT NULL,
	`image_url` text,
	`options` text DEFAULT '{}' NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `shipments_orders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_order_line_items_order_idx` ON `shipments_order_line_items` (`order_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_order_statuses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`handle` text NOT NULL,
	`name` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_order_statuses_handle_unique` ON `shipments_order_statuses` (`handle`);--> statement-breakpoint
CREATE TABLE `shipments_orders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`number` text NOT NULL,
	`reference` text NOT NULL,
	`email` text,
	`customer_id` integer,
	`status_handle` text,
	`is_completed` integer DEFAULT false NOT NULL,
	`total_price` text DEFAULT '0' NOT NULL,
	`total_tax` text DEFAULT '0' NOT NULL,
	`total_shipping` text DEFAULT '0' NOT NULL,
	`total_discount` text DEFAULT '0' NOT NULL,
	`coupon_code` text,
	`payment_method` text,
	`shipping_method` text,
	`customer_notes` text,
	`internal_notes` text,
	`is_gift` integer DEFAULT false NOT NULL,
	`gift_message` text,
	`custom_field_1` text,
	`custom_field_2` text,
	`custom_field_3` text,
	`fields` text DEFAULT '{}' NOT NULL,
	`date_ordered` integer,
	`date_updated` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_orders_reference_unique` ON `shipments_orders` (`reference`);--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_orders_number_unique` ON `shipments_orders` (`number`);--> statement-breakpoint
CREATE INDEX `shipments_orders_export_idx` ON `shipments_orders` (`is_completed`,`date_updated`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_external_references` (
	`shipment_id` integer NOT NULL,
	`integration_id` integer NOT NULL,
	`external_id` text,
	`external_url` text,
	`last_event_at` integer,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	PRIMARY KEY(`shipment_id`, `integration_id`),
	FOREIGN KEY (`shipment_id`) REFERENCES `shipments_shipments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`integration_id`) REFERENCES `shipments_integrations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `shipments_status_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`shipment_id` integer NOT NULL,
	`from_status` text,
	`to_status` text NOT NULL,
	`message` text,
	`user_id` text,
	`source_integration` text,
	`source_external_code` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`shipment_id`) REFERENCES `shipments_shipments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shipments_status_history_shipment_idx` ON `shipments_status_history` (`shipment_id`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_shipments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`reference` text NOT NULL,
	`order_id` integer NOT NULL,
	`status` text DEFAULT 'new' NOT NULL,
	`date_shipped` integer,
	`date_scheduled_ship` integer,
	`tracking_number` text,
	`tracking_url` text,
	`carrier` text,
	`service` text,
	`fulfillment_notes` text,
	`shipping_notes` text,
	`enabled` integer DEFAULT true NOT NULL,
	`fields` text DEFAULT '{}' NOT NULL,
	`date_deleted` integer,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shipments_shipments_reference_unique` ON `shipments_shipments` (`reference`);--> statement-breakpoint
CREATE INDEX `shipments_shipments_order_idx` ON `shipments_shipments` (`order_id`,`id`);--> statement-breakpoint
CREATE INDEX `shipments_shipments_status_idx` ON `shipments_shipments` (`status`,`id`);--> statement-breakpoint
CREATE TABLE `shipments_webhook_deliveries` (
	`integration_id` integer NOT NULL,
	`delivery_id` text NOT NULL,
	`outcome` text DEFAULT '{}' NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	PRIMARY KEY(`integration_id`, `delivery_id`),
	FOREIGN KEY (`integration_id`) REFERENCES `shipments_integrations`(`id`) ON UPDATE no action ON DELETE cascade
);
