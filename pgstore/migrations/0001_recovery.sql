-- pgstore migration 1: the recovery store (package recovery, docs/contract.md section 13).
--
-- One row per turn and one row per effect, so that effects of one turn advance
-- concurrently: each effect has its own revision, the compare-and-swap token.
CREATE TABLE pgstore_turns (
    conversation_id text        NOT NULL CHECK (octet_length(conversation_id) BETWEEN 1 AND 256),
    turn_id         text        NOT NULL CHECK (octet_length(turn_id) BETWEEN 1 AND 256),
    status          text        NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    ended_at        timestamptz,
    PRIMARY KEY (conversation_id, turn_id)
);

CREATE TABLE pgstore_effects (
    conversation_id text    NOT NULL,
    turn_id         text    NOT NULL,
    effect_id       text    NOT NULL CHECK (octet_length(effect_id) BETWEEN 1 AND 256),
    position        integer NOT NULL,  -- the order the host authorized the effects in
    revision        bigint  NOT NULL CHECK (revision >= 1),
    state           text    NOT NULL CHECK (state IN ('pending', 'claimed', 'admitted', 'needs-reconciliation', 'completed')),
    holder          text    NOT NULL DEFAULT '',
    lease_until     timestamptz,       -- NULL is the zero time
    result          bytea,             -- opaque; NULL is empty
    reconciled      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (conversation_id, turn_id, effect_id),
    UNIQUE (conversation_id, turn_id, position),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES pgstore_turns (conversation_id, turn_id) ON DELETE CASCADE
);
