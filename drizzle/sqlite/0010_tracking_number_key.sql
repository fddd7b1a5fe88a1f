DROP INDEX `shipments_shipments_tracking_number_idx`;--> statement-breakpoint
CREATE INDEX `shipments_shipments_tracking_number_key_idx` ON `shipments_shipments` (upper(replace(replace("tracking_number", ' ', ''), '-', '')));
