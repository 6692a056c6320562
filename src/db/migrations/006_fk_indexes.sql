-- Foreign keys whose ON DELETE CASCADE would otherwise scan the whole child table on every delete.
CREATE INDEX IF NOT EXISTS operations_app ON operations(app_id);
CREATE INDEX IF NOT EXISTS log_drains_addon ON log_drains(addon_id);
CREATE INDEX IF NOT EXISTS api_tokens_user ON api_tokens(user_id);
