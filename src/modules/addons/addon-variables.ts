import { objectId } from '../../shared/ids.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { ADDON_KINDS, type AddonKind } from './addon-kinds.ts';
import { type AddonServerRow } from './addon-servers.store.ts';

// The app's variables an addon server sets (SCALINGO_POSTGRESQL_URL, DATABASE_URL…), pointing at the server's
// alias on the app's network, and their removal with the server.

/** The URL the variables hold: the server's credentials at its alias and port. */
function addonUrl(row: AddonServerRow): string {
  const spec = ADDON_KINDS[row.kind as AddonKind];
  return spec.url({ username: row.username, password: row.password, database: row.database }, row.alias, spec.port);
}

/** SCALINGO_<TYPE>_URL always; the short alias (DATABASE_URL, REDIS_URL) unless the app has its own. Returns the names set. */
export function setAddonVariables(variables: VariablesStore, row: AddonServerRow): string[] {
  const url = addonUrl(row);
  const set: string[] = [];
  ADDON_KINDS[row.kind as AddonKind].variables.forEach((name, i) => {
    const existing = variables.byName(row.app_id, name);
    if (existing && i > 0) return;
    if (existing) variables.update(existing.id, url);
    else variables.insert({ id: objectId(), app_id: row.app_id, name, value: url });
    set.push(name);
  });
  return set;
}

/** The variables the server set (`row.variables`), removed where they still hold its URL. */
export function removeAddonVariables(variables: VariablesStore, row: AddonServerRow): void {
  const url = addonUrl(row);
  for (const name of JSON.parse(row.variables) as string[]) {
    const v = variables.byName(row.app_id, name);
    if (v && v.value === url) variables.delete(v.id);
  }
}
