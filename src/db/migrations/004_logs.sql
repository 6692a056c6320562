-- Logs history (#20, #22): maps app id → its most recent lines, in arrival order (seq).
-- "Last n lines of an app" is a backwards range scan of (app_id, seq). No foreign key on purpose:
-- a line racing an app deletion must not fail the whole batch; maintenance sweeps orphans.
CREATE TABLE log_lines (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id TEXT NOT NULL,
  ts TEXT NOT NULL,                  -- RFC 3339, UTC, always 9 fractional digits (sorts as text)
  time_ms INTEGER NOT NULL,          -- same instant in ms, for age-based rotation
  container TEXT NOT NULL,           -- web-1, worker-2, one-off-3, router
  stream INTEGER NOT NULL DEFAULT 0, -- 0 stdout, 1 stderr (syslog severity)
  text TEXT NOT NULL
);
CREATE INDEX log_lines_app_seq ON log_lines (app_id, seq);

-- Collection cursors: maps engine container id → the newest line stored from it, so following
-- resumes after a container or emulator restart with neither loss nor duplicates.
CREATE TABLE log_cursors (
  engine_id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  last_ts TEXT NOT NULL,             -- normalised like log_lines.ts
  last_texts TEXT NOT NULL           -- JSON array of the texts stored at exactly last_ts
);

-- Logs archives (#21): maps app id → gzip files of rotated history, under <data>/logs-archives/.
CREATE TABLE log_archives (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, -- list order and pagination cursor
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  file TEXT NOT NULL,
  size INTEGER NOT NULL,             -- bytes of the gzip file
  lines INTEGER NOT NULL,
  from_ms INTEGER NOT NULL,
  to_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX log_archives_app ON log_archives (app_id, seq);

-- Stand-in addons (what drains need): maps addon id → its app, provider and plan. No database runs.
CREATE TABLE addons (
  id TEXT PRIMARY KEY,               -- ad-<uuid>
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  provider_id TEXT NOT NULL,         -- scalingo-redis, scalingo-postgresql…
  plan_id TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX addons_app ON addons (app_id);

-- Log drains (#31–#36): maps app (and optionally addon) → targets. The platform identifies a drain
-- by its composed url; id names its file under <data>/drains/<id>.log.
CREATE TABLE log_drains (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  addon_id TEXT REFERENCES addons(id) ON DELETE CASCADE, -- NULL = drain of the app itself
  type TEXT NOT NULL,
  url TEXT NOT NULL,                 -- composed like the platform's (docs/fidelity.md)
  host TEXT,
  port TEXT,
  token TEXT,
  drain_region TEXT,
  transport TEXT,                    -- tcp, udp, tls or file: how lines are delivered
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX log_drains_target ON log_drains (app_id, IFNULL(addon_id, ''), url);
