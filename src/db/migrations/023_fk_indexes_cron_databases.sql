-- The last two foreign keys without an index on their column: deleting an app scanned the whole of
-- deployment_crons (one row per deployment that had a cron.json), deleting an addon all of dedicated_databases.
CREATE INDEX IF NOT EXISTS deployment_crons_app ON deployment_crons(app_id);
CREATE INDEX IF NOT EXISTS dedicated_databases_addon ON dedicated_databases(addon_id);
