-- Event counts kept as events are written, so a timeline's pagination meta (total_count) is not a scan of
-- every event of the user's apps (GET /v1/events at 1,000,000 events: seconds before, milliseconds after).
-- kind 1: events of app `a`; kind 2: events done by user `a`; kind 3: events done by user `a` on app `b`
-- (what kinds 1 and 2 both count, subtracted once for a user's timeline).
CREATE TABLE event_counts (
  kind INTEGER NOT NULL,
  a TEXT NOT NULL,
  b TEXT NOT NULL DEFAULT '',
  n INTEGER NOT NULL,
  PRIMARY KEY (kind, a, b)
) WITHOUT ROWID;

INSERT INTO event_counts (kind, a, b, n) SELECT 1, app_id, '', COUNT(*) FROM events WHERE app_id IS NOT NULL GROUP BY app_id;
INSERT INTO event_counts (kind, a, b, n) SELECT 2, user_id, '', COUNT(*) FROM events WHERE user_id IS NOT NULL GROUP BY user_id;
INSERT INTO event_counts (kind, a, b, n) SELECT 3, user_id, app_id, COUNT(*) FROM events WHERE user_id IS NOT NULL AND app_id IS NOT NULL GROUP BY user_id, app_id;

CREATE TRIGGER events_counted AFTER INSERT ON events BEGIN
  INSERT INTO event_counts (kind, a, b, n) SELECT 1, NEW.app_id, '', 1 WHERE NEW.app_id IS NOT NULL
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + 1;
  INSERT INTO event_counts (kind, a, b, n) SELECT 2, NEW.user_id, '', 1 WHERE NEW.user_id IS NOT NULL
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + 1;
  INSERT INTO event_counts (kind, a, b, n) SELECT 3, NEW.user_id, NEW.app_id, 1 WHERE NEW.user_id IS NOT NULL AND NEW.app_id IS NOT NULL
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER events_uncounted AFTER DELETE ON events BEGIN
  UPDATE event_counts SET n = n - 1 WHERE kind = 1 AND a = OLD.app_id AND b = '';
  UPDATE event_counts SET n = n - 1 WHERE kind = 2 AND a = OLD.user_id AND b = '';
  UPDATE event_counts SET n = n - 1 WHERE kind = 3 AND a = OLD.user_id AND b = OLD.app_id;
END;
