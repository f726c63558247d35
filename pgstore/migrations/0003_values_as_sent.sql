-- pgstore migration 3: answer values and workflow transitions are stored
-- byte for byte (docs/contract.md section 13: the validator, the store and the
-- workflow read one value). jsonb rewrote them: 1e400 came back as a 401-digit
-- literal and -0 as 0. bytea keeps the bytes the resolver validated and
-- digested. Rows written before this migration keep jsonb's rewriting of them.
ALTER TABLE pgstore_cards
    ALTER COLUMN answer_value TYPE bytea USING convert_to(answer_value::text, 'UTF8');
ALTER TABLE pgstore_card_transitions
    ALTER COLUMN transition TYPE bytea USING convert_to(transition::text, 'UTF8');
