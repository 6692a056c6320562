-- Users of the emulated platform (seeded from the config at every start).
CREATE TABLE users (
  id TEXT PRIMARY KEY,                -- us-<uuid>
  username TEXT NOT NULL UNIQUE,
  email TEXT NOT NULL UNIQUE,
  fullname TEXT NOT NULL DEFAULT '',
  password_hash TEXT NOT NULL,        -- scrypt$<salt>$<hash>
  payment_method INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
);

-- API tokens: maps token id → owner and the SHA-256 of the secret (the secret itself is never stored).
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  issued_at INTEGER NOT NULL,
  last_used_at INTEGER,
  fixed INTEGER NOT NULL DEFAULT 0     -- 1 = declared in the config (CI determinism)
);

-- Applications: maps app id → settings, owner and lifecycle status.
CREATE TABLE apps (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  owner_id TEXT NOT NULL REFERENCES users(id),
  parent_id TEXT REFERENCES apps(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'new',
  stack_id TEXT NOT NULL,
  git_source TEXT,
  force_https INTEGER NOT NULL DEFAULT 0,
  sticky_session INTEGER NOT NULL DEFAULT 0,
  router_logs INTEGER NOT NULL DEFAULT 0,
  flags TEXT NOT NULL DEFAULT '{}',     -- JSON object
  limits TEXT NOT NULL DEFAULT '{}',    -- JSON object; only operator-set limits
  last_deployed_at INTEGER,
  last_deployed_by TEXT,
  last_deployment_id TEXT
);
CREATE INDEX apps_owner ON apps(owner_id);
CREATE INDEX apps_parent ON apps(parent_id);

-- Collaborators: maps (app, email) → invitation status and the user once known.
CREATE TABLE collaborators (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  status TEXT NOT NULL,                 -- pending | accepted
  invitation_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (app_id, email)
);
CREATE INDEX collaborators_user ON collaborators(user_id);

-- Events: the timeline of every action. app_id is kept (no FK) so a deleted app's events remain for the user.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  app_id TEXT,
  app_name TEXT,
  user_id TEXT,
  created_at INTEGER NOT NULL,
  type_data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_app ON events(app_id, seq);
CREATE INDEX events_user ON events(user_id, seq);
