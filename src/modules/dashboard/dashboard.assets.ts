// The dashboard's files: built next to the bundle (dist/dashboard/, by scripts/build.mjs) when the
// emulator runs from its package, bundled in memory with esbuild when it runs from its sources
// (tsx, tests). Read once, kept in memory.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type DashboardAssets = Record<'index.html' | 'app.js' | 'style.css', string>;

let loading: Promise<DashboardAssets> | undefined;

export function dashboardAssets(): Promise<DashboardAssets> {
  return (loading ??= load().catch((err) => {
    loading = undefined;
    throw err;
  }));
}

async function load(): Promise<DashboardAssets> {
  // In the package every module is bundled into dist/, so this is dist/dashboard/.
  const built = fileURLToPath(new URL('./dashboard/', import.meta.url));
  if (existsSync(join(built, 'app.js'))) {
    const read = (name: string) => readFileSync(join(built, name), 'utf8');
    return { 'index.html': read('index.html'), 'app.js': read('app.js'), 'style.css': read('style.css') };
  }
  // From the sources: the same build as the package's (a computed path keeps it out of bundles).
  const script = pathToFileURL(
    join(fileURLToPath(new URL('.', import.meta.url)), '../../../scripts/build-dashboard.mjs'),
  ).href;
  const { bundleDashboard } = (await import(script)) as { bundleDashboard: () => Promise<DashboardAssets> };
  return bundleDashboard();
}
