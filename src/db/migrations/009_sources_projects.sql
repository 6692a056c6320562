-- Uploaded sources (POST /v1/sources): maps source id → its creator, lifetime and stored archive
-- (<state dir>/sources/<id>.tar.gz once uploaded). Expired rows and files are swept.
CREATE TABLE sources (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  size INTEGER,                       -- bytes, once uploaded
  uploaded_at INTEGER
);
CREATE INDEX sources_user ON sources(user_id);
CREATE INDEX sources_expiry ON sources(expires_at);

-- Projects: maps project id → owner and name; every user has exactly one default project.
CREATE TABLE projects (
  id TEXT PRIMARY KEY,                -- prj-<uuid>
  owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  is_default INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (owner_id, name)
);
CREATE INDEX projects_owner ON projects(owner_id);

-- An app belongs to one project of its owner (NULL until the app is first read: the owner's default).
ALTER TABLE apps ADD COLUMN project_id TEXT REFERENCES projects(id) ON DELETE SET NULL;
CREATE INDEX apps_project ON apps(project_id);
