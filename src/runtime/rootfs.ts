import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { userCacheDir } from '../shared/cache-dir.ts';
import { type ImageRecipe } from './image-recipes.ts';

// Root filesystems from Debian's packages with mmdebstrap, using the machine's own Debian mirror
// configuration (/etc/apt/sources.list*): the only package source reachable offline. Downloaded
// .deb files are kept in a shared cache so the next recipe (or a rebuild) downloads nothing again.

const BUILD_TIMEOUT_MS = 30 * 60_000;

/** The Debian suite to build (the host's codename; bookworm when the host says nothing). */
export function debianSuite(): string {
  try {
    const m = /^VERSION_CODENAME=(\S+)$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (m && existsSync('/etc/debian_version')) return m[1].replace(/"/g, '');
  } catch {
    // not a Debian host
  }
  return 'bookworm';
}

/** The host's Debian source files (one-line .list and deb822 .sources), Debian mirrors only. */
export function debianSources(): string[] {
  const files: string[] = [];
  if (existsSync('/etc/apt/sources.list')) files.push('/etc/apt/sources.list');
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir))
    for (const f of readdirSync(dir).sort()) if (/\.(list|sources)$/.test(f)) files.push(join(dir, f));
  return files.filter((f) => {
    const text = readFileSync(f, 'utf8');
    // Only Debian's archive: third-party repositories (node, cloud SDKs…) are not part of the recipe.
    return (
      /^\s*(deb\s|URIs:)/m.test(text) &&
      /debian\.org|\/debian\b/.test(text) &&
      !/nodesource|google|docker\.com/.test(text)
    );
  });
}

/** The Debian archive the host's sources use (deb.debian.org when they name none). */
export function debianMirror(sources: string[]): string {
  for (const f of sources) {
    const m = /(?:^\s*deb\s+(?:\[[^\]]*\]\s+)?|^URIs:\s*)(\S+\/debian)\/?\s*$/m.exec(readFileSync(f, 'utf8'));
    if (m) return m[1];
  }
  return 'http://deb.debian.org/debian';
}

export const debCacheDir = (): string => userCacheDir('debs');

export function mmdebstrapAvailable(): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, 'mmdebstrap')));
}

/**
 * Builds the recipe's root filesystem as a tar file at `out`. Progress lines go to onLine; a
 * failure throws with the last lines of mmdebstrap's output.
 */
export function buildRootfs(
  recipe: ImageRecipe,
  suite: string,
  out: string,
  onLine: (line: string) => void,
): Promise<void> {
  if (!mmdebstrapAvailable()) {
    throw new Error(
      'mmdebstrap is not installed: run `sudo bash scripts/docker-up.sh` (it installs it), or `apt-get install mmdebstrap`',
    );
  }
  const sources = debianSources();
  const cache = debCacheDir();
  mkdirSync(cache, { recursive: true });
  const args = [
    '--variant=minbase',
    '--mode=root',
    `--include=${recipe.packages.join(',')}`,
    '--aptopt=Acquire::Languages "none"',
    '--dpkgopt=force-unsafe-io',
    '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/doc/*',
    '--dpkgopt=path-exclude=/usr/share/info/*',
    '--skip=download/empty',
    '--setup-hook=mkdir -p "$1"/var/cache/apt/archives/',
    `--setup-hook=sync-in ${cache} /var/cache/apt/archives/`,
    ...recipe.customize.map((c) => `--customize-hook=chroot "$1" sh -c '${c.replace(/'/g, `'\\''`)}'`),
    `--customize-hook=sync-out /var/cache/apt/archives ${cache}`,
    // The image carries no apt lists nor cached packages.
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb',
    suite,
    out,
    // The host's source files name the host's suites: another suite comes from the same mirror.
    ...(sources.length && suite === debianSuite() ? sources : [debianMirror(sources)]),
  ];
  return new Promise((resolve, reject) => {
    // mmdebstrap's own temporary root (with /dev, /proc and /sys mounted in it while packages install)
    // lives in the build's directory, so a build cut short leaves nothing outside it (removeBuildDir).
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', TMPDIR: dirname(out) };
    const child = spawn('mmdebstrap', args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const tail: string[] = [];
    const timer = setTimeout(() => child.kill('SIGTERM'), BUILD_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const l = line.trimEnd();
        if (!l) continue;
        tail.push(l);
        if (tail.length > 30) tail.shift();
        // mmdebstrap's own "I: …" steps are the progress worth showing; dpkg chatter is not.
        if (/^[IWE]: /.test(l)) onLine(l);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`mmdebstrap failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
}

/**
 * Removes a build's directory: first whatever is still mounted under it (the chroot's /dev, /proc and
 * /sys when mmdebstrap was killed), deepest first; then the files, only once nothing is mounted there
 * any more — a mount that would not go is left in place with its directory, never emptied.
 */
export function removeBuildDir(dir: string): void {
  for (const m of mountsUnder(dir)) spawnSync('umount', ['-l', m]);
  if (mountsUnder(dir).length) return;
  rmSync(dir, { recursive: true, force: true });
}

/** Mount points at or below `dir`, deepest first (/proc/self/mounts escapes spaces as \\040). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) =>
      (line.split(' ')[1] ?? '').replace(/\\(\d{3})/g, (_, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      ),
    )
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}
