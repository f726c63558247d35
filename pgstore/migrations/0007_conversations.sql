-- pgstore migration 7: the conversation store (package conversation,
-- docs/contract.md section 20).
--
-- One row per conversation with its owner, its number of turns and its
-- running turn (NULL when none); one row per turn, keyed by (conversation,
-- position), with the user's text that started it and, once it ended, its
-- reduced state: the turn's JSON form, stored byte for byte.
CREATE TABLE IF NOT EXISTS pgstore_conversations (
    conversation_id text    PRIMARY KEY CHECK (octet_length(conversation_id) BETWEEN 1 AND 256),
    principal       text    NOT NULL,
    tenant          text    NOT NULL,
    turns           integer NOT NULL DEFAULT 0,
    running_turn    text
);

CREATE TABLE IF NOT EXISTS pgstore_conversation_turns (
    conversation_id text    NOT NULL REFERENCES pgstore_conversations ON DELETE CASCADE,
    position        integer NOT NULL,
    turn_id         text    NOT NULL CHECK (octet_length(turn_id) BETWEEN 1 AND 256),
    user_text       text    NOT NULL,
    state           bytea,  -- NULL while the turn runs
    PRIMARY KEY (conversation_id, position),
    UNIQUE (conversation_id, turn_id)
);
