-- Emulator-wide key/values: the instance id that labels this data dir's containers.
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- App lifecycle additions: consecutive crash counter, and where the app's code comes from.
ALTER TABLE apps ADD COLUMN consecutive_crashes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE apps ADD COLUMN source_dir TEXT;           -- a directory bound in the config (watched)

-- Formation: maps (app, process type) → amount and size.
CREATE TABLE formation (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  size TEXT NOT NULL,
  command TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (app_id, type)
);

-- Containers the platform knows of: maps platform container id → engine container, type/index, state.
CREATE TABLE containers (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  type_index INTEGER NOT NULL,
  size TEXT NOT NULL,
  command TEXT NOT NULL DEFAULT '',
  engine_id TEXT,
  state TEXT NOT NULL,            -- booting | running | stopping | crashed | stopped
  host_port INTEGER,
  deployment_id TEXT,
  detached INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX containers_app ON containers(app_id, deleted_at);
CREATE INDEX containers_engine ON containers(engine_id);

-- Operations: maps operation id → asynchronous work on an app and its outcome.
CREATE TABLE operations (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  type TEXT NOT NULL,             -- scale | restart | start-one-off
  status TEXT NOT NULL,           -- pending | running | done | error
  error TEXT,
  data TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  finished_at INTEGER
);

-- Deployments: maps deployment id → source, build output, image and resulting process types.
CREATE TABLE deployments (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  status TEXT NOT NULL,           -- queued | building | pushing | starting | success | build-error | crashed-error | timeout-error | aborted
  source TEXT NOT NULL,           -- human description: directory, git URL, archive URL
  source_kind TEXT NOT NULL,      -- directory | git | archive
  git_ref TEXT,
  image TEXT,
  process_types TEXT NOT NULL DEFAULT '{}',  -- JSON {type: command}
  pusher_id TEXT,
  output TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX deployments_app ON deployments(app_id, created_at);

-- Environment variables: maps (app, name) → value.
CREATE TABLE variables (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  UNIQUE (app_id, name)
);
