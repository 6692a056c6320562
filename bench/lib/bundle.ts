import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';

/** The bundle `npm start` runs (dist/main.mjs), built from the tree measured when its sources are newer. */
export function ensureEmulatorBundle(emulatorDir: string): void {
  execFileSync(process.execPath, [join(emulatorDir, 'scripts/build.mjs')], { stdio: 'inherit' });
}

/**
 * A baseline server bundled the way the emulator is (esbuild, ESM, node20, minified, dependencies
 * inlined), so it starts with plain `node` too: comparing a bundled emulator with a baseline run
 * through tsx would charge the loader (~40 MB of RSS) to the baseline only.
 */
export async function bundleBaseline(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return outfile;
}
