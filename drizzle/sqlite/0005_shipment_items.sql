ALTER TABLE `shipments_order_line_items` ADD `shippable` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `shipments_shipments` ADD `items` text DEFAULT '[]' NOT NULL;