// The dashboard's browser code: src/dashboard/app.ts bundled into one script (no framework, no CDN),
// next to its page and style sheet. Used by scripts/build.mjs (into dist/dashboard/) and, when the
// emulator runs from its sources, in memory by src/modules/dashboard/dashboard.assets.ts.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const srcDir = join(dirname(fileURLToPath(import.meta.url)), '../src/dashboard');

/** { 'index.html', 'app.js', 'style.css' } → contents. */
export async function bundleDashboard() {
  const result = await build({
    entryPoints: [join(srcDir, 'app.ts')],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    logLevel: 'warning',
  });
  return {
    'index.html': readFileSync(join(srcDir, 'index.html'), 'utf8'),
    'style.css': readFileSync(join(srcDir, 'style.css'), 'utf8'),
    'app.js': result.outputFiles[0].text,
  };
}
