import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchPackage,
  nearestVersions,
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

  it('fetches a version once into the user cache, concurrent callers sharing it', async () => {
    const [a, b] = await Promise.all([fetchPackage('semver', '6.3.1'), fetchPackage('semver', '6.3.1')]);
    expect(a).toBe(b);
    expect(a.startsWith(registryCacheDir())).toBe(true);
    expect(JSON.parse(readFileSync(join(a, 'package.json'), 'utf8')).version).toBe('6.3.1');
    expect(existsSync(join(a, 'bin', 'semver.js'))).toBe(true);
  });

  it('names the package when the registry does not serve it', async () => {
    await expect(fetchPackage('semver', '0.0.0-not-published')).rejects.toThrow(/semver@0\.0\.0-not-published/);
  });
});
