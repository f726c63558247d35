-- pgstore migration 2: the interactions store (package interactions,
-- docs/contract.md sections 3 and 13).
--
-- One row per card, keyed by (conversation, correlation id); the revision is
-- the compare-and-swap token. Times are Unix epoch milliseconds, as in
-- interactions.Record; 0 is "not set".
CREATE TABLE pgstore_cards (
    conversation_id      text    NOT NULL CHECK (octet_length(conversation_id) BETWEEN 1 AND 256),
    correlation_id       text    NOT NULL CHECK (octet_length(correlation_id) BETWEEN 1 AND 256),
    version              integer NOT NULL,
    revision             bigint  NOT NULL CHECK (revision >= 1),
    status               text    NOT NULL,
    scope_conversation   text    NOT NULL,
    scope_principal      text    NOT NULL,
    scope_tenant         text    NOT NULL,
    scope_customer       text    NOT NULL,
    scope_public_owner   text    NOT NULL,
    spec                 jsonb   NOT NULL,
    schema_id            text    NOT NULL,
    schema_revision      bigint  NOT NULL,
    created_at           bigint  NOT NULL,
    expires_at           bigint  NOT NULL DEFAULT 0,
    closed_at            bigint  NOT NULL DEFAULT 0,
    answer_submission_id text,            -- NULL when no person's answer closed the card
    answer_action        text,
    answer_value         jsonb,           -- the canonical value of a submit; NULL otherwise
    answer_digest        text,            -- stored verbatim: it identifies the submission
    reason               text    NOT NULL DEFAULT '',
    superseded_by        text    NOT NULL DEFAULT '',
    PRIMARY KEY (conversation_id, correlation_id)
);

-- The workflow outbox: one row per terminal transition, written in the same
-- transaction as the terminal record. The host's workflow consumes it in id
-- order and marks rows consumed.
CREATE TABLE pgstore_card_transitions (
    id              bigserial   PRIMARY KEY,
    conversation_id text        NOT NULL,
    correlation_id  text        NOT NULL,
    revision        bigint      NOT NULL,
    status          text        NOT NULL,
    at              bigint      NOT NULL,
    transition      jsonb       NOT NULL,  -- interactions.Transition as JSON
    stored_at       timestamptz NOT NULL DEFAULT now(),
    consumed_at     timestamptz,
    UNIQUE (conversation_id, correlation_id, revision),
    FOREIGN KEY (conversation_id, correlation_id) REFERENCES pgstore_cards (conversation_id, correlation_id) ON DELETE CASCADE
);

CREATE INDEX pgstore_card_transitions_unconsumed ON pgstore_card_transitions (id) WHERE consumed_at IS NULL;
