import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNpm as hostNpm } from './host-npm.ts';

// Build containers have no network (only loopback): the npm registry is reachable from the
// emulator's host only. So before a Node build, the host's npm downloads the packages the app's
// lockfile names into the app's build cache (`--ignore-scripts`: no code of the app or of its
// dependencies runs on the host), and the build container installs them with the stack's own npm,
// `--offline`, from that cache — install scripts and native builds run inside the container.
// Without a lockfile, the host resolves one (`--package-lock-only`) and the build uses it.

function hasDependencies(pkg: string): boolean {
  try {
    const j = JSON.parse(readFileSync(pkg, 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    return ['dependencies', 'optionalDependencies'].some((k) => Object.keys(j[k] ?? {}).length > 0);
  } catch {
    return false;
  }
}

const runNpm = async (args: string[], cwd: string, say: (line: string) => void) =>
  (await hostNpm(args, { cwd, onLine: (l) => say(`       ${l}`) })).code;

/**
 * Fills `<cacheDir>/npm` with the packages of the app in `context`. Resolves the files to add to the
 * build context (a resolved package-lock.json when the app has none).
 */
export async function prefetchNpm(
  context: string,
  cacheDir: string,
  say: (line: string) => void,
): Promise<Record<string, string>> {
  const pkg = join(context, 'package.json');
  if (existsSync(join(context, 'node_modules')) || !hasDependencies(pkg)) return {};
  const lock = ['package-lock.json', 'npm-shrinkwrap.json'].find((f) => existsSync(join(context, f)));
  const key = createHash('sha256')
    .update(readFileSync(pkg))
    .update(lock ? readFileSync(join(context, lock)) : '')
    .digest('hex')
    .slice(0, 16);
  mkdirSync(cacheDir, { recursive: true });
  const generated = join(cacheDir, 'resolved-package-lock.json');
  const extra = (): Record<string, string> =>
    !lock && existsSync(generated) ? { 'package-lock.json': readFileSync(generated, 'utf8') } : {};
  if (existsSync(join(cacheDir, 'prefetch.key')) && readFileSync(join(cacheDir, 'prefetch.key'), 'utf8') === key) {
    say('-----> npm packages already in the build cache (package.json and lockfile unchanged)');
    return extra();
  }
  const work = mkdtempSync(join(tmpdir(), 'scalingo-emu-npm-'));
  const cache = join(cacheDir, 'npm');
  try {
    copyFileSync(pkg, join(work, 'package.json'));
    if (lock) copyFileSync(join(context, lock), join(work, lock));
    else {
      say('-----> No package-lock.json: resolving one with npm from the emulator host');
      if (
        (await runNpm(
          ['install', '--package-lock-only', '--ignore-scripts', '--cache', cache, '--no-audit', '--no-fund'],
          work,
          say,
        )) !== 0
      ) {
        say(
          '!     The npm registry could not be reached from the emulator host (npm install --package-lock-only failed ' +
            'above); the build installs only what the cache already holds.',
        );
        return {};
      }
      copyFileSync(join(work, 'package-lock.json'), generated);
    }
    say(
      '-----> Downloading npm packages from the registry into the build cache (on the emulator host, scripts not run)',
    );
    const code = await runNpm(
      ['ci', '--ignore-scripts', '--omit=dev', '--cache', cache, '--no-audit', '--no-fund', '--loglevel=error'],
      work,
      say,
    );
    if (code !== 0) {
      say(
        '!     The npm registry could not be reached from the emulator host (npm ci failed above); the build installs only what the cache already holds.',
      );
      return extra();
    }
    writeFileSync(join(cacheDir, 'prefetch.key'), key);
    return extra();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
