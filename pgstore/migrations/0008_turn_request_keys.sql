-- pgstore migration 8: a turn's request key (package conversation,
-- docs/contract.md section 20.1).
--
-- The client's id of the request that started a turn (AG-UI's runId, a
-- resent user message's id), NULL when its start carried none. A key
-- names at most one turn of a conversation, which a unique index
-- enforces: a start with a key the conversation has seen gets that turn
-- back.
ALTER TABLE pgstore_conversation_turns
    ADD COLUMN IF NOT EXISTS request_key text CHECK (octet_length(request_key) BETWEEN 1 AND 256);

CREATE UNIQUE INDEX IF NOT EXISTS pgstore_conversation_turns_request_key
    ON pgstore_conversation_turns (conversation_id, request_key);
