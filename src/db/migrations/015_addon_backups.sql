-- Backups of real addon servers (issue #15): a dump made by the server's own tool (pg_dump,
-- mariadb-dump, a Redis RDB snapshot) as a tar.gz archive in <state dir>/addon-backups/<id>.tar.gz.
-- The row (and the file, removed by the service) goes with the addon.
CREATE TABLE addon_backups (
  id TEXT PRIMARY KEY,
  addon_id TEXT NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  name TEXT NOT NULL,                -- what the CLI names the downloaded file (<name>.tar.gz)
  status TEXT NOT NULL,              -- scheduled, running, done, error
  method TEXT NOT NULL DEFAULT 'manual',
  size INTEGER NOT NULL DEFAULT 0,   -- bytes of the archive once done
  error TEXT,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
);
CREATE INDEX addon_backups_addon ON addon_backups (addon_id, created_at);
