import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type EventRow } from '../events/events.store.ts';

// The deployment (build) cache of an app lives in <state dir>/caches/<app id>: what a build keeps
// for the next one of the same app. `DELETE /v1/apps/:app/caches/deployment` and a stack change
// (the CLI's `stacks-set` says "Deployment cache … has been reset") drop it.

export function buildCacheDir(stateDir: string, appId: string): string {
  return join(stateDir, 'caches', appId);
}

/** Removes the app's build cache; resolves false when there was none. */
export async function dropBuildCache(stateDir: string, appId: string): Promise<boolean> {
  const dir = buildCacheDir(stateDir, appId);
  // Most apps never built with a cache: one stat, not a recursive removal, on every app deletion.
  if (!existsSync(dir)) return false;
  await rm(dir, { recursive: true, force: true });
  return true;
}

/**
 * The listener that drops an app's build cache when its stack changes or the app is deleted. Registered at start
 * (src/wiring/apps.ts), not with the caches routes, which are built at their first request.
 */
export function dropBuildCacheOnEvent(stateDir: string): (e: EventRow) => void {
  return (e) => {
    if (e.app_id && (e.type === 'stack_changed' || e.type === 'delete_app'))
      void dropBuildCache(stateDir, e.app_id).catch(() => undefined);
  };
}
