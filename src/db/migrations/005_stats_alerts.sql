-- Stats samples: maps (app, container type, type_index, time) → what the engine reported for that container
-- at that sample. One compact row per container per sample (WITHOUT ROWID: the key is the clustering order).
-- No FK to apps: samples of a deleted app simply age out with the retention (config stats.retentionHours).
CREATE TABLE stats_samples (
  app_id TEXT NOT NULL,
  type TEXT NOT NULL,             -- container type: web, worker, one-off…
  idx INTEGER NOT NULL,           -- type_index (web-2 → 2)
  time INTEGER NOT NULL,          -- ms since epoch, injected clock
  cpu REAL NOT NULL,              -- fraction of one core (1.0 = one core busy)
  memory INTEGER NOT NULL,        -- bytes
  memory_limit INTEGER NOT NULL,  -- bytes
  swap INTEGER NOT NULL,          -- bytes
  swap_limit INTEGER NOT NULL,    -- bytes
  PRIMARY KEY (app_id, type, time, idx)
) WITHOUT ROWID;
CREATE INDEX stats_samples_time ON stats_samples(time);

-- Router records: one row per request the router handled for an app (requests per minute, 5XX, p95).
-- Same retention as the samples; no FK for the same reason.
CREATE TABLE router_requests (
  app_id TEXT NOT NULL,
  time INTEGER NOT NULL,          -- arrival, ms since epoch
  status INTEGER NOT NULL,        -- HTTP status sent to the client (499: client left)
  duration_ms REAL NOT NULL,
  container TEXT                  -- web-1…, null when the router answered by itself
);
CREATE INDEX router_requests_app ON router_requests(app_id, time);
CREATE INDEX router_requests_time ON router_requests(time);

-- Alerts: maps alert id (al-<uuid>) → its rule on an app's metric.
CREATE TABLE alerts (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  container_type TEXT NOT NULL,
  metric TEXT NOT NULL,           -- cpu | memory | swap | p95_response_time | 5XX | all | rpm_per_container
  threshold REAL NOT NULL,        -- the API's `limit` (a fraction for cpu, memory, swap)
  disabled INTEGER NOT NULL DEFAULT 0,
  send_when_below INTEGER NOT NULL DEFAULT 0,
  duration_before_trigger INTEGER NOT NULL DEFAULT 0,  -- nanoseconds
  remind_every INTEGER,           -- nanoseconds; null = never (written "" by the API)
  metadata TEXT NOT NULL DEFAULT '{}',                 -- JSON object
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX alerts_app ON alerts(app_id, created_at);

-- Notifiers: maps notifier id (no-<uuid>) → where an app's events and alerts are sent.
CREATE TABLE notifiers (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  platform TEXT NOT NULL,         -- platform name: email | slack | webhook | rocket_chat
  active INTEGER NOT NULL DEFAULT 1,
  send_all_alerts INTEGER NOT NULL DEFAULT 0,
  send_all_events INTEGER NOT NULL DEFAULT 0,
  selected_event_ids TEXT NOT NULL DEFAULT '[]',       -- JSON array of event type ids
  type_data TEXT NOT NULL DEFAULT '{}',                -- JSON object (webhook_url | emails, user_ids)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX notifiers_app ON notifiers(app_id, created_at);

-- Alert → notifiers that receive it, in the order given.
CREATE TABLE alert_notifiers (
  alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  notifier_id TEXT NOT NULL REFERENCES notifiers(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (alert_id, notifier_id)
);
CREATE INDEX alert_notifiers_notifier ON alert_notifiers(notifier_id);

-- The platform's own actor: alert events are recorded as done by `scalingo-platform` (doc.scalingo.com alerts page).
-- Its password hash is not a scrypt hash, so nobody can log in as it.
INSERT OR IGNORE INTO users (id, username, email, fullname, password_hash, payment_method, created_at)
VALUES ('us-scalingo-platform', 'scalingo-platform', 'scalingo-platform@emulator.invalid', 'Scalingo Platform', '!', 1, 0);
