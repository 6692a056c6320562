import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchPackage,
  fetchTarball,
  nearestVersions,
  newestForNode,
  registryCacheDir,
  resolvePublished,
} from '../../src/modules/deployments/registry-packages.ts';

describe('nearestVersions', () => {
  const versions = ['18.0.0', '18.20.8', '20.1.0', '20.19.5', '22.21.0', '24.1.0', '24.11.1', '26.12.1', '27.0.0-rc.1'];
  it('proposes the latest of the majors closest to what was asked', () => {
    expect(nearestVersions(versions, '23.x')).toEqual(['22.21.0', '24.11.1', '26.12.1']);
    expect(nearestVersions(versions, '19')).toEqual(['18.20.8', '20.19.5', '22.21.0']);
    expect(nearestVersions(versions, '>=30')).toEqual(['22.21.0', '24.11.1', '26.12.1']);
  });
  it('falls back to the highest majors when the range is not one', () => {
    expect(nearestVersions(versions, 'not a range')).toEqual(['22.21.0', '24.11.1', '26.12.1']);
  });
});

// The host's npm and the npm registry, as the builds use them.
describe('registry packages through the host npm', () => {
  let cache: string;
  const saved = process.env.XDG_CACHE_HOME;
  beforeAll(() => {
    cache = mkdtempSync(join(tmpdir(), 'registry-cache-'));
    process.env.XDG_CACHE_HOME = cache;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(cache, { recursive: true, force: true });
  });

  it('resolves a range to the highest published version', async () => {
    expect(await resolvePublished('semver', '6.x')).toMatch(/^6\.\d+\.\d+$/);
    expect(await resolvePublished('semver', '>=999')).toBeNull();
  });

  it("picks the newest version of a range whose engines.node accepts the Node.js (npm's own choice)", async () => {
    expect(await newestForNode('npm', '10.x', '22.23.3')).toMatch(/^10\.\d+\.\d+$/);
    // corepack 0.34 dropped Node.js 18, 0.35 Node.js 20: an old Node gets an older corepack.
    const forNode18 = await newestForNode('corepack', '*', '18.20.8');
    expect(forNode18).toMatch(/^0\.(2\d|3[0-3])\.\d+$/);
    expect(await newestForNode('npm', '99.x', '24.21.0')).toBeNull();
    await expect(newestForNode('not-a-package-of-the-registry-0x', '*', '24.0.0')).rejects.toThrow(
      /did not list the versions of not-a-package-of-the-registry-0x@\*/,
    );
  });

  it('fetches a version once into the user cache, concurrent callers sharing it', async () => {
    const [a, b] = await Promise.all([fetchPackage('semver', '6.3.1'), fetchPackage('semver', '6.3.1')]);
    expect(a).toBe(b);
    expect(a.startsWith(registryCacheDir())).toBe(true);
    expect(JSON.parse(readFileSync(join(a, 'package.json'), 'utf8')).version).toBe('6.3.1');
    expect(existsSync(join(a, 'bin', 'semver.js'))).toBe(true);
  });

  it('keeps a tarball whole, as the registry serves it, when asked for one', async () => {
    const [a, b] = await Promise.all([fetchTarball('semver', '6.3.0'), fetchTarball('semver', '6.3.0')]);
    expect(a).toBe(b);
    expect(a).toBe(join(registryCacheDir(), 'semver@6.3.0.tgz'));
    const { t } = await import('tar');
    const names: string[] = [];
    await t({ file: a, onReadEntry: (e) => names.push(e.path) });
    expect(names).toContain('package/package.json');
    await expect(fetchTarball('semver', '0.0.0-not-published')).rejects.toThrow(/semver@0\.0\.0-not-published/);
  });

  it('names the package when the registry does not serve it', async () => {
    await expect(fetchPackage('semver', '0.0.0-not-published')).rejects.toThrow(/semver@0\.0\.0-not-published/);
  });
});
