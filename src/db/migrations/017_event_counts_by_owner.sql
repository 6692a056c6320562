-- A user's timeline count without a pass over every app they own (GET /v1/events at 10,000 apps: 25 ms → one row).
-- kind 4: events on the apps user `a` owns, done by someone else (or by no user): the sum over a's apps of
-- kind 1 − kind 3 (migration 016). Kept as events are written and removed, and as apps are created, deleted or
-- transferred; collaborations (few per user) are still summed at read time.
INSERT INTO event_counts (kind, a, b, n)
  SELECT 4, ap.owner_id, '', SUM(c.n - COALESCE(o.n, 0))
  FROM apps ap
  JOIN event_counts c ON c.kind = 1 AND c.a = ap.id AND c.b = ''
  LEFT JOIN event_counts o ON o.kind = 3 AND o.a = ap.owner_id AND o.b = ap.id
  GROUP BY ap.owner_id;

CREATE TRIGGER events_counted_owner AFTER INSERT ON events WHEN NEW.app_id IS NOT NULL BEGIN
  INSERT INTO event_counts (kind, a, b, n) SELECT 4, owner_id, '', 1 FROM apps WHERE id = NEW.app_id AND owner_id IS NOT NEW.user_id
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER events_uncounted_owner AFTER DELETE ON events WHEN OLD.app_id IS NOT NULL BEGIN
  UPDATE event_counts SET n = n - 1
  WHERE kind = 4 AND b = '' AND a = (SELECT owner_id FROM apps WHERE id = OLD.app_id AND owner_id IS NOT OLD.user_id);
END;

-- An app's contribution to its owner's count: its events not done by the owner.
CREATE TRIGGER apps_counted AFTER INSERT ON apps BEGIN
  INSERT INTO event_counts (kind, a, b, n)
    SELECT 4, NEW.owner_id, '', COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = NEW.id AND b = ''), 0)
                              - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = NEW.owner_id AND b = NEW.id), 0)
    WHERE true
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER apps_uncounted AFTER DELETE ON apps BEGIN
  UPDATE event_counts
  SET n = n - (COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = OLD.id AND b = ''), 0)
             - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = OLD.owner_id AND b = OLD.id), 0))
  WHERE kind = 4 AND a = OLD.owner_id AND b = '';
END;

CREATE TRIGGER apps_transfer_counted AFTER UPDATE OF owner_id ON apps WHEN OLD.owner_id IS NOT NEW.owner_id BEGIN
  UPDATE event_counts
  SET n = n - (COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = OLD.id AND b = ''), 0)
             - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = OLD.owner_id AND b = OLD.id), 0))
  WHERE kind = 4 AND a = OLD.owner_id AND b = '';
  INSERT INTO event_counts (kind, a, b, n)
    SELECT 4, NEW.owner_id, '', COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = NEW.id AND b = ''), 0)
                              - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = NEW.owner_id AND b = NEW.id), 0)
    WHERE true
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + excluded.n;
END;
