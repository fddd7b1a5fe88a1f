CREATE TABLE `shipments_exchange_activity` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`action` text NOT NULL,
	`page` integer,
	`order_number` text,
	`orders_exported` integer,
	`status_code` integer NOT NULL,
	`reason` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL
);
