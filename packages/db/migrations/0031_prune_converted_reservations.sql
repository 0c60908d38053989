-- A checkout reservation is deleted once its order is placed (checkout-settlement.ts PLACE);
-- those kept before that never would be.
DELETE FROM "checkout_reservations" WHERE "status" = 'converted';
