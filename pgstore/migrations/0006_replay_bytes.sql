-- pgstore migration 6: byte offsets in the replay window, for retention by
-- bytes (WindowOptions.MaxBytes in window.go, docs/contract.md section 11.4).
--
-- byte_offset is the data bytes of the turn's retained frames before this
-- one, counted from the first frame retained when it was appended: an
-- Append stores the previous frame's byte_offset plus its octet_length(data)
-- (0 when no frame is retained), so that over the retained frames, always
-- contiguous, the frames from s on take the new frame's end offset minus
-- byte_offset(s) bytes, and an Append finds the prefix to drop without
-- summing the turn. octet_length on bytea reads the stored length, never
-- the (toasted) bytes.
ALTER TABLE pgstore_replay_frames ADD COLUMN byte_offset bigint NOT NULL DEFAULT 0 CHECK (byte_offset >= 0);

UPDATE pgstore_replay_frames f SET byte_offset = o.byte_offset
FROM (SELECT conversation_id, turn_id, seq,
        coalesce(sum(octet_length(data)) OVER (PARTITION BY conversation_id, turn_id ORDER BY seq
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS byte_offset
      FROM pgstore_replay_frames) o
WHERE f.conversation_id = o.conversation_id AND f.turn_id = o.turn_id AND f.seq = o.seq AND o.byte_offset > 0;
