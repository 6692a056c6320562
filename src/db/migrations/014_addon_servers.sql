-- Real database servers of addons (issue #15): maps addon id → the container, volume and network
-- its server runs with, and the credentials it was initialised with. The row goes with the addon.
CREATE TABLE addon_servers (
  addon_id TEXT PRIMARY KEY REFERENCES addons(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,                -- postgresql, mysql, redis
  container_name TEXT NOT NULL,      -- Docker container (also the volume's name)
  alias TEXT NOT NULL,               -- host name of the server on the app's network
  username TEXT NOT NULL,
  password TEXT NOT NULL,
  database TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL,
  -- Variables the addon set on the app (JSON array of names): removed with it.
  variables TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL
);
CREATE INDEX addon_servers_app ON addon_servers (app_id);
