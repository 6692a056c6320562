import { type Db } from '../../db/database.ts';

export interface DedicatedDatabaseRow {
  app_id: string;
  addon_id: string;
  created_at: number;
}

export interface FirewallRuleRow {
  id: string;
  addon_id: string;
  type: 'custom_range' | 'managed_range';
  cidr: string;
  label: string;
  range_id: string;
  created_at: number;
}

export interface DatabaseSettingsRow {
  addon_id: string;
  maintenance_weekday: number;
  maintenance_hour: number;
  periodic_backups_enabled: number;
  periodic_backups_hours: string;
  features: string;
}

/** Dedicated databases, their firewall rules and the settings of real addons' databases (migration 022). */
export function createDatabasesStore(db: Db) {
  const s = {
    byApp: db.prepare<[string], DedicatedDatabaseRow>('SELECT * FROM dedicated_databases WHERE app_id = ?'),
    byAddon: db.prepare<[string], DedicatedDatabaseRow>('SELECT * FROM dedicated_databases WHERE addon_id = ?'),
    insert: db.prepare(
      'INSERT INTO dedicated_databases (app_id, addon_id, created_at) VALUES (@app_id, @addon_id, @created_at)',
    ),
    rules: db.prepare<[string], FirewallRuleRow>(
      'SELECT * FROM database_firewall_rules WHERE addon_id = ? ORDER BY created_at, rowid',
    ),
    insertRule: db.prepare(
      'INSERT INTO database_firewall_rules (id, addon_id, type, cidr, label, range_id, created_at) ' +
        'VALUES (@id, @addon_id, @type, @cidr, @label, @range_id, @created_at)',
    ),
    deleteRule: db.prepare('DELETE FROM database_firewall_rules WHERE addon_id = ? AND id = ?'),
    settings: db.prepare<[string], DatabaseSettingsRow>('SELECT * FROM database_settings WHERE addon_id = ?'),
    saveSettings: db.prepare(
      `INSERT INTO database_settings (addon_id, maintenance_weekday, maintenance_hour, periodic_backups_enabled, periodic_backups_hours, features)
       VALUES (@addon_id, @maintenance_weekday, @maintenance_hour, @periodic_backups_enabled, @periodic_backups_hours, @features)
       ON CONFLICT (addon_id) DO UPDATE SET maintenance_weekday = excluded.maintenance_weekday, maintenance_hour = excluded.maintenance_hour,
         periodic_backups_enabled = excluded.periodic_backups_enabled, periodic_backups_hours = excluded.periodic_backups_hours,
         features = excluded.features`,
    ),
  };
  return {
    byApp: (appId: string) => s.byApp.get(appId),
    byAddon: (addonId: string) => s.byAddon.get(addonId),
    insert: (row: DedicatedDatabaseRow) => void s.insert.run(row),
    rules: (addonId: string) => s.rules.all(addonId),
    insertRule: (row: FirewallRuleRow) => void s.insertRule.run(row),
    deleteRule: (addonId: string, id: string) => s.deleteRule.run(addonId, id).changes > 0,
    settings: (addonId: string) => s.settings.get(addonId),
    saveSettings: (row: DatabaseSettingsRow) => void s.saveSettings.run(row),
  };
}

export type DatabasesStore = ReturnType<typeof createDatabasesStore>;
