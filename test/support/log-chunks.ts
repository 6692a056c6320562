/**
 * The stored lines one a row, read from the log_chunks table by SQLite's own JSON functions (not by the store's
 * code): seq, app_id, ts, time_ms, container, stream, text. Tests check what the store wrote with it.
 */
export const STORED_LINES =
  'SELECT c.last_seq - c.count + 1 + j.key AS seq, c.app_id AS app_id, j.value ->> 0 AS ts, j.value ->> 1 AS time_ms, ' +
  'j.value ->> 2 AS container, j.value ->> 3 AS stream, j.value ->> 4 AS text FROM log_chunks c, json_each(c.lines) j';
