-- Dedicated databases ("Database NG", issue 22): an app holding one database addon, listed by
-- GET /v1/databases. The row goes with its app (and with its addon).
CREATE TABLE dedicated_databases (
  app_id TEXT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  addon_id TEXT NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
);

-- Firewall rules of a dedicated database's server, as the database API keeps them: a custom CIDR
-- range (with a label) or a managed range (by id). Recorded, not enforced (docs/fidelity.md).
CREATE TABLE database_firewall_rules (
  id TEXT PRIMARY KEY,
  addon_id TEXT NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  type TEXT NOT NULL,                -- custom_range, managed_range
  cidr TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '',
  range_id TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL
);
CREATE INDEX database_firewall_rules_addon ON database_firewall_rules (addon_id, created_at);

-- What the database API keeps of a real addon's settings: its maintenance window, its periodic
-- backups configuration and its features (the row is made on the first change; the defaults stand before).
CREATE TABLE database_settings (
  addon_id TEXT PRIMARY KEY REFERENCES addons(id) ON DELETE CASCADE,
  maintenance_weekday INTEGER NOT NULL,
  maintenance_hour INTEGER NOT NULL,
  periodic_backups_enabled INTEGER NOT NULL,
  periodic_backups_hours TEXT NOT NULL,  -- JSON array of hours (UTC)
  features TEXT NOT NULL DEFAULT '[]'    -- JSON array of the features turned on (force-ssl, publicly-available)
);
