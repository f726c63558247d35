-- pgstore migration 5: the replay window shared by every instance of a host
-- (package replay, docs/contract.md section 11; Window in window.go).
--
-- One row per turn: its bounds. lower is the retained lower bound as a
-- cursor (frames lower+1 .. latest are all kept), latest the seq of the
-- newest frame (0 before the first), ended true from the frame that ended
-- the turn on. An Append moves latest by exactly one, in the statement that
-- inserts the frame, so a gap cannot be stored; retention moves lower and
-- deletes the frames at or below it in one statement, so a gap cannot
-- appear. A turn whose frames retention removed keeps its row (lower =
-- latest) until the tombstone expires: a reconnect learns stale-cursor,
-- a writer continues at latest+1.
CREATE TABLE pgstore_replay_turns (
    conversation_id text        NOT NULL CHECK (octet_length(conversation_id) BETWEEN 1 AND 256),
    turn_id         text        NOT NULL CHECK (octet_length(turn_id) BETWEEN 1 AND 256),
    lower           bigint      NOT NULL DEFAULT 0 CHECK (lower >= 0),
    latest          bigint      NOT NULL DEFAULT 0 CHECK (latest >= lower),
    ended           boolean     NOT NULL DEFAULT false,
    appended_at     timestamptz NOT NULL DEFAULT now(),  -- the newest frame's append
    PRIMARY KEY (conversation_id, turn_id)
);

-- No index on appended_at: every append updates it, and an index would
-- make each of those updates write index entries (no HOT update); Trim,
-- once a minute, scans the turns instead.

-- One row per retained frame. The key (conversation, turn, seq) makes a
-- duplicate impossible to store; the turn row's latest makes a reorder or a
-- gap impossible. data is the envelope's canonical JSON as it was appended,
-- resent byte for byte, never parsed again; type is its SSE event name.
-- There is no foreign key to the turn: the append statement moves the turn
-- row in the same statement that inserts the frame (a frame is never
-- without its turn), and a foreign key's check would cost every append a
-- second look at that row. Trim deletes a forgotten turn's frames with it.
CREATE TABLE pgstore_replay_frames (
    conversation_id text   NOT NULL,
    turn_id         text   NOT NULL,
    seq             bigint NOT NULL CHECK (seq >= 1),
    type            text   NOT NULL,
    data            bytea  NOT NULL,
    PRIMARY KEY (conversation_id, turn_id, seq)
);
