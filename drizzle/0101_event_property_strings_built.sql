-- The event strings built again with the property values' strings (0100): forgetting the zone each
-- project's strings were built in makes the next refresh build them from all of its events
-- (refresh_event_bits), and no chart reads them until then (the pair rows and the exact path answer).
DELETE FROM event_bit_timezones;
