// Lockfiles name where each package was downloaded from (`resolved` in package-lock.json and Yarn 1's
// yarn.lock): often registry.npmjs.org or registry.yarnpkg.com, sometimes a company registry. The host
// fetches through the registry its npm is configured with (a mirror, behind a proxy), so the copy of
// the lockfile the host's prefetch reads names that registry instead. The packages are the same
// (same name, version and integrity): only where they come from changes, and the build container,
// which installs from the prefetched cache, reads the app's own lockfile.

/**
 * A registry tarball URL (`…/<name>/-/<file>.tgz`, `<name>` possibly `@scope/name`) moved to
 * `registry`; any other URL (git, a plain https tarball) as it is.
 */
export function onRegistry(url: string, registry: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!/^https?:$/.test(parsed.protocol)) return url;
  const segments = parsed.pathname.split('/');
  const dash = segments.lastIndexOf('-');
  const file = segments[dash + 1];
  if (dash < 2 || dash !== segments.length - 2 || !file?.endsWith('.tgz')) return url;
  const scoped = segments[dash - 2]?.startsWith('@');
  const name = segments.slice(scoped ? dash - 2 : dash - 1, dash);
  return `${registry}${[...name, '-', file].join('/')}${parsed.hash}`;
}

/** package-lock.json / npm-shrinkwrap.json with every `resolved` on `registry` (its JSON, re-serialised). */
export function npmLockOnRegistry(text: string, registry: string): string {
  const lock = JSON.parse(text) as unknown;
  const walk = (node: unknown, depth: number): void => {
    if (!node || typeof node !== 'object' || depth > 200) return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === 'resolved' && typeof value === 'string')
        (node as Record<string, unknown>)[key] = onRegistry(value, registry);
      else walk(value, depth + 1);
    }
  };
  walk(lock, 0);
  return `${JSON.stringify(lock, null, 2)}\n`;
}

/** Yarn 1's yarn.lock with every `resolved "…"` line on `registry`. */
export function yarnLockOnRegistry(text: string, registry: string): string {
  return text
    .split('\n')
    .map((line) => {
      const m = /^(\s+resolved\s+")([^"]+)(".*)$/.exec(line);
      return m ? `${m[1]}${onRegistry(m[2], registry)}${m[3]}` : line;
    })
    .join('\n');
}
