-- TCP gateway addons (issue 34): the port of 127.0.0.1 where the emulator listens for the app's `tcp`
-- containers (the platform's TCP_URL), kept so that TCP_URL stays the same across restarts. The row
-- goes with its addon, and with its app.
CREATE TABLE tcp_gateways (
  addon_id TEXT PRIMARY KEY REFERENCES addons(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  port INTEGER NOT NULL
);
CREATE INDEX tcp_gateways_app ON tcp_gateways (app_id);
