import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

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
