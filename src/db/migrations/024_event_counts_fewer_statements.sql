-- The same counts as migrations 016 and 017, with less work on the hot path of an app created then deleted.
-- An event's counts (kinds 1–4) are one upsert instead of four statements in two triggers. An app's contribution to its
-- owner's kind 4 is added only when events already name its id (never for an id just made, as a created app's is), and
-- taken away only when it is not zero (some of its events were not done by its owner).

DROP TRIGGER events_counted;
DROP TRIGGER events_counted_owner;
CREATE TRIGGER events_counted AFTER INSERT ON events BEGIN
  INSERT INTO event_counts (kind, a, b, n)
    SELECT 1, NEW.app_id, '', 1 WHERE NEW.app_id IS NOT NULL
    UNION ALL SELECT 2, NEW.user_id, '', 1 WHERE NEW.user_id IS NOT NULL
    UNION ALL SELECT 3, NEW.user_id, NEW.app_id, 1 WHERE NEW.user_id IS NOT NULL AND NEW.app_id IS NOT NULL
    UNION ALL SELECT 4, owner_id, '', 1 FROM apps WHERE id = NEW.app_id AND owner_id IS NOT NEW.user_id
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + 1;
END;

DROP TRIGGER apps_counted;
CREATE TRIGGER apps_counted AFTER INSERT ON apps
WHEN EXISTS (SELECT 1 FROM event_counts WHERE kind = 1 AND a = NEW.id AND b = '') BEGIN
  INSERT INTO event_counts (kind, a, b, n)
    SELECT 4, NEW.owner_id, '', COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = NEW.id AND b = ''), 0)
                              - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = NEW.owner_id AND b = NEW.id), 0)
    WHERE true
    ON CONFLICT (kind, a, b) DO UPDATE SET n = n + excluded.n;
END;

DROP TRIGGER apps_uncounted;
CREATE TRIGGER apps_uncounted AFTER DELETE ON apps
WHEN COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = OLD.id AND b = ''), 0)
  <> COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = OLD.owner_id AND b = OLD.id), 0) BEGIN
  UPDATE event_counts
  SET n = n - (COALESCE((SELECT n FROM event_counts WHERE kind = 1 AND a = OLD.id AND b = ''), 0)
             - COALESCE((SELECT n FROM event_counts WHERE kind = 3 AND a = OLD.owner_id AND b = OLD.id), 0))
  WHERE kind = 4 AND a = OLD.owner_id AND b = '';
END;
