-- Logs history in chunks (issue 40): one row holds a run of one app's lines stored together (a batch of the
-- pipeline, up to 1,000 lines), not a row a line. A line's seq is its place in its chunk: the chunk's lines are
-- last_seq - count + 1 … last_seq. Per line, a row cost a bound multi-row INSERT, an index entry and, at rotation,
-- a delete: SQLite was a third of the emulator's CPU in a burst of lines; a chunk is one JSON text and one index entry.
-- Rotation that cuts inside a chunk rewrites it with the lines it keeps (last_seq stays). No foreign key, as before:
-- a batch racing an app deletion must not fail; maintenance sweeps orphans.
CREATE TABLE log_chunks (
  last_seq INTEGER PRIMARY KEY AUTOINCREMENT, -- seq of the chunk's last line; AUTOINCREMENT: a seq is never given twice
  app_id TEXT NOT NULL,
  count INTEGER NOT NULL,                     -- lines in the chunk (≥ 1)
  bytes INTEGER NOT NULL,                     -- characters of the lines' texts (the history's byte bound)
  first_ms INTEGER NOT NULL,                  -- time_ms of the chunk's first line
  min_ms INTEGER NOT NULL,                    -- oldest and newest time_ms of its lines (age rotation)
  max_ms INTEGER NOT NULL,
  lines TEXT NOT NULL                         -- JSON [[ts, time_ms, container, stream, text], …] in seq order
);
CREATE INDEX log_chunks_app ON log_chunks (app_id, last_seq);

-- The lines already stored: one chunk each, with their seq (a subscriber or a rotation may hold one).
INSERT INTO log_chunks (last_seq, app_id, count, bytes, first_ms, min_ms, max_ms, lines)
  SELECT seq, app_id, 1, LENGTH(text), time_ms, time_ms, time_ms, json_array(json_array(ts, time_ms, container, stream, text))
  FROM log_lines ORDER BY seq;
-- Seqs given before (lines since rotated or deleted included) are not given again: the counter goes on from log_lines'.
UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log_lines'), 0))
  WHERE name = 'log_chunks';
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'log_chunks', seq FROM sqlite_sequence WHERE name = 'log_lines'
  AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'log_chunks');
DROP TABLE log_lines;
