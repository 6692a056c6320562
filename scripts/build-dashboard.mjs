// The dashboard's browser code: src/dashboard/app.ts bundled into one script (no framework, no CDN;
// xterm.js for the web terminal),
// next to its page and style sheet. Used by scripts/build.mjs (into dist/dashboard/) and, when the
// emulator runs from its sources, in memory by src/modules/dashboard/dashboard.assets.ts.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const srcDir = join(dirname(fileURLToPath(import.meta.url)), '../src/dashboard');
const require = createRequire(import.meta.url);

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
    // xterm.js's own sheet first (the web terminal), then the dashboard's.
    'style.css': `${readFileSync(require.resolve('@xterm/xterm/css/xterm.css'), 'utf8')}\n${readFileSync(join(srcDir, 'style.css'), 'utf8')}`,
    'app.js': result.outputFiles[0].text,
  };
}
