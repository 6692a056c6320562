-- Custom domains of an app: maps (app, hostname) → canonical flag and the TLS certificate given by the user.
CREATE TABLE domains (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL UNIQUE,            -- a hostname serves one app only, across the emulator
  canonical INTEGER NOT NULL DEFAULT 0,
  letsencrypt_enabled INTEGER NOT NULL DEFAULT 1,
  tlscert TEXT,                         -- PEM chain as given (validated)
  tlskey TEXT,                          -- PEM key as given (validated, never answered back)
  cert_subject TEXT,                    -- the certificate's subject CN, shown by the CLI
  cert_expires_at INTEGER,              -- validTo of the leaf certificate (ms)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX domains_app ON domains(app_id);

-- Autoscalers: maps (app, container type) → metric, target and bounds.
CREATE TABLE autoscalers (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  container_type TEXT NOT NULL,
  metric TEXT NOT NULL,
  target REAL NOT NULL,
  min_containers INTEGER NOT NULL,
  max_containers INTEGER NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  last_scale INTEGER,                   -- when it last scaled the type (ms)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (app_id, container_type)
);

-- Limited collaborators (the platform's "Limited Collaborator" role).
ALTER TABLE collaborators ADD COLUMN is_limited INTEGER NOT NULL DEFAULT 0;

-- cron.json of each deployment's code: maps deployment id → its jobs (JSON), read at build time.
CREATE TABLE deployment_crons (
  deployment_id TEXT PRIMARY KEY REFERENCES deployments(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  jobs TEXT NOT NULL
);

-- Cron jobs of an app's deployed cron.json: maps (app, job command) → its last run.
CREATE TABLE cron_runs (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  command TEXT NOT NULL,
  last_run_at INTEGER NOT NULL,
  PRIMARY KEY (app_id, command)
);

-- The platform's autoscaler actor: scale events it causes are done by `scalingo-platform-autoscaler`
-- (doc.scalingo.com/platform/app/autoscaler, "Monitoring Autoscaling Events").
INSERT OR IGNORE INTO users (id, username, email, fullname, password_hash, payment_method, created_at)
VALUES ('us-scalingo-platform-autoscaler', 'scalingo-platform-autoscaler', 'scalingo-platform-autoscaler@emulator.invalid', 'Scalingo Platform Autoscaler', '!', 1, 0);
