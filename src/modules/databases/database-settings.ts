// The settings the database API keeps for a real addon's database: its weekly maintenance window and
// its periodic backups configuration. Defaults stand until the first change (docs/fidelity.md).
import { type DatabasesStore } from './databases.store.ts';

export interface DatabaseSettings {
  maintenanceWeekday: number;
  maintenanceHour: number;
  periodicBackupsEnabled: boolean;
  periodicBackupsHours: number[];
  /** Features turned on (force-ssl, publicly-available). */
  features: string[];
}

/** The platform's defaults: periodic backups on at 01:00 UTC; maintenance on Tuesdays from 02:00 UTC for 8 hours. */
export const DEFAULT_SETTINGS: DatabaseSettings = {
  maintenanceWeekday: 2,
  maintenanceHour: 2,
  periodicBackupsEnabled: true,
  periodicBackupsHours: [1],
  features: [],
};

export function createDatabaseSettings(store: DatabasesStore) {
  const get = (addonId: string): DatabaseSettings => {
    const row = store.settings(addonId);
    if (!row)
      return { ...DEFAULT_SETTINGS, periodicBackupsHours: [...DEFAULT_SETTINGS.periodicBackupsHours], features: [] };
    return {
      maintenanceWeekday: row.maintenance_weekday,
      maintenanceHour: row.maintenance_hour,
      periodicBackupsEnabled: row.periodic_backups_enabled === 1,
      periodicBackupsHours: JSON.parse(row.periodic_backups_hours) as number[],
      features: JSON.parse(row.features) as string[],
    };
  };
  return {
    get,
    update(addonId: string, change: Partial<DatabaseSettings>): DatabaseSettings {
      const next = { ...get(addonId), ...change };
      store.saveSettings({
        addon_id: addonId,
        maintenance_weekday: next.maintenanceWeekday,
        maintenance_hour: next.maintenanceHour,
        periodic_backups_enabled: next.periodicBackupsEnabled ? 1 : 0,
        periodic_backups_hours: JSON.stringify(next.periodicBackupsHours),
        features: JSON.stringify(next.features),
      });
      return next;
    },
  };
}

export type DatabaseSettingsService = ReturnType<typeof createDatabaseSettings>;
