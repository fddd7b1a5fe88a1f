-- Each shipment row keeps a copy of its parcels (every parcel change rewrites it in its transaction), so
-- every read of a shipment carries its parcels without a second query. The copy of the parcels already
-- there: one pass over the parcels, once.
ALTER TABLE `shipments_shipments` ADD `parcels` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
UPDATE `shipments_shipments` SET `parcels` = (
  SELECT json_group_array(json_object(
    'id', p.id, 'shipmentId', p.shipment_id, 'weight', p.weight, 'weightUnit', p.weight_unit,
    'length', p.length, 'width', p.width, 'height', p.height, 'dimensionUnit', p.dimension_unit,
    'boxId', p.box_id, 'items', json(p.items), 'status', p.status, 'trackingNumber', p.tracking_number,
    'trackingUrl', p.tracking_url, 'carrier', p.carrier, 'service', p.service, 'labelUrl', p.label_url,
    'labelFormat', p.label_format, 'labelCost', p.label_cost, 'labelCurrency', p.label_currency,
    'labelOperationId', p.label_operation_id,
    'createdAt', strftime('%Y-%m-%dT%H:%M:%fZ', p.created_at / 1000.0, 'unixepoch'),
    'updatedAt', strftime('%Y-%m-%dT%H:%M:%fZ', p.updated_at / 1000.0, 'unixepoch')))
  FROM (SELECT * FROM `shipments_parcels` WHERE shipment_id = `shipments_shipments`.id ORDER BY id) AS p)
WHERE id IN (SELECT shipment_id FROM `shipments_parcels`);
