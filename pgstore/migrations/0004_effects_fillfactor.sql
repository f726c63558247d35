-- pgstore migration 4: room on each page of pgstore_effects for the new
-- versions of its rows. Every write of an effect (claim, admission,
-- completion) updates columns no index covers; with free space on the page
-- PostgreSQL writes them as heap-only tuples, without touching the indexes.
-- Pages written before this migration get the room as they are rewritten.
ALTER TABLE pgstore_effects SET (fillfactor = 50);
ALTER TABLE pgstore_turns SET (fillfactor = 70);
