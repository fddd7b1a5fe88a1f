-- Each shipment row keeps a copy of its parcels (every parcel change rewrites it in its transaction), so
-- every read of a shipment carries its parcels without a second query. The copy of the parcels already
-- there: one pass over the parcels, once.
ALTER TABLE "shipments_shipments" ADD COLUMN "parcels" json DEFAULT '[]'::json NOT NULL;--> statement-breakpoint
UPDATE "shipments_shipments" s SET "parcels" = copy.parcels
FROM (
  SELECT p.shipment_id, json_agg(json_build_object(
    'id', p.id, 'shipmentId', p.shipment_id, 'weight', p.weight, 'weightUnit', p.weight_unit,
    'length', p.length, 'width', p.width, 'height', p.height, 'dimensionUnit', p.dimension_unit,
    'boxId', p.box_id, 'items', p.items, 'status', p.status, 'trackingNumber', p.tracking_number,
    'trackingUrl', p.tracking_url, 'carrier', p.carrier, 'service', p.service, 'labelUrl', p.label_url,
    'labelFormat', p.label_format, 'labelCost', p.label_cost, 'labelCurrency', p.label_currency,
    'labelOperationId', p.label_operation_id,
    'createdAt', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY p.id) AS parcels
  FROM "shipments_parcels" p GROUP BY p.shipment_id
) AS copy
WHERE s.id = copy.shipment_id;
