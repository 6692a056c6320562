import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { afterAll, describe, expect, it } from 'vitest';
import { shellEnv } from '../../src/modules/deployments/build-container.ts';
import { npmLockOnRegistry, onRegistry, yarnLockOnRegistry } from '../../src/modules/deployments/lockfile-registry.ts';
import { cacheDirectories, nodeScripts } from '../../src/modules/deployments/node-lifecycle.ts';
import {
  assertLockfileReadable,
  lockfileOf,
  type PackageManagerPlan,
  readPackageJson,
  resolvePackageManager,
} from '../../src/modules/deployments/package-manager.ts';

// The package manager a Node.js app is built with, its lifecycle's scripts, the lockfiles' URLs moved
// to the host's registry (issue 34, points 2 and 3). With real Docker: test/docker/package-managers.test.ts.
const dirs: string[] = [];
const appDir = (files: Record<string, string>) => {
  const d = mkdtempSync(join(tmpdir(), 'emu-pm-'));
  dirs.push(d);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(d, name, '..'), { recursive: true });
    writeFileSync(join(d, name), content);
  }
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PKG = '{"name":"x","dependencies":{"ms":"2.1.3"}}';

describe('the package manager a lockfile names', () => {
  it('package-lock.json or npm-shrinkwrap.json → npm, yarn.lock → Yarn, pnpm-lock.yaml → pnpm, none → npm', () => {
    expect(lockfileOf(appDir({ 'package.json': PKG }))).toEqual({ lockfile: null, name: 'npm' });
    expect(lockfileOf(appDir({ 'package-lock.json': '{}' }))).toEqual({ lockfile: 'package-lock.json', name: 'npm' });
    expect(lockfileOf(appDir({ 'npm-shrinkwrap.json': '{}' }))).toEqual({
      lockfile: 'npm-shrinkwrap.json',
      name: 'npm',
    });
    expect(lockfileOf(appDir({ 'yarn.lock': '' }))).toEqual({ lockfile: 'yarn.lock', name: 'yarn' });
    expect(lockfileOf(appDir({ 'pnpm-lock.yaml': '' }))).toEqual({ lockfile: 'pnpm-lock.yaml', name: 'pnpm' });
  });

  it('several lockfiles: the buildpack errors, the managers named in its order', () => {
    expect(() => lockfileOf(appDir({ 'package-lock.json': '{}', 'yarn.lock': '', 'pnpm-lock.yaml': '' }))).toThrow(
      /^Multiple lockfiles found: several package managers \(npm,pnpm,Yarn\)/,
    );
    expect(() => lockfileOf(appDir({ 'npm-shrinkwrap.json': '{}', 'yarn.lock': '' }))).toThrow(
      /^Multiple lockfiles conflicting with npm-shrinkwrap\.json/,
    );
  });

  it('a corrupt lockfile is named before anything runs', () => {
    expect(() => assertLockfileReadable(appDir({ 'package-lock.json': '{"a":' }), 'package-lock.json')).toThrow(
      /^package-lock\.json cannot be read \(.+\): it is corrupt/,
    );
    expect(() => assertLockfileReadable(appDir({ 'pnpm-lock.yaml': 'a: [\n' }), 'pnpm-lock.yaml')).toThrow(
      /^pnpm-lock\.yaml cannot be read/,
    );
    expect(() => assertLockfileReadable(appDir({ 'yarn.lock': 'just words\n' }), 'yarn.lock')).toThrow(
      /^yarn\.lock cannot be read \(no package entry\)/,
    );
    const yarn1 = '# yarn lockfile v1\n\nms@2.1.3:\n  version "2.1.3"\n';
    expect(() => assertLockfileReadable(appDir({ 'yarn.lock': yarn1 }), 'yarn.lock')).not.toThrow();
  });

  it('package.json: unparsable is the buildpack error; scripts, engines, cacheDirectories are read', () => {
    expect(() => readPackageJson(appDir({ 'package.json': '{' }))).toThrow(/^Unable to parse package.json/);
    const pkg = readPackageJson(
      appDir({
        'package.json': JSON.stringify({
          scripts: { build: 'tsc', bad: 3 },
          engines: { yarn: '1.x' },
          packageManager: 'yarn@1.22.22+sha512.abc',
          cacheDirectories: ['.next/cache', 4],
          devDependencies: { tsc: '1' },
        }),
      }),
    );
    expect(pkg).toMatchObject({
      scripts: { build: 'tsc' },
      engines: { yarn: '1.x' },
      packageManager: 'yarn@1.22.22+sha512.abc',
      cacheDirectories: ['.next/cache'],
      hasDependencies: true,
      workspaces: false,
    });
  });

  it('npm without a registry lookup; two managers declared in package.json is the buildpack error', async () => {
    const plan = await resolvePackageManager(appDir({ 'package.json': PKG, 'package-lock.json': '{}' }));
    expect(plan).toMatchObject({ name: 'npm', lockfile: 'package-lock.json', tool: null, berry: false });
    const both = JSON.stringify({ engines: { yarn: '1.x' }, packageManager: 'pnpm@9.0.0' });
    await expect(resolvePackageManager(appDir({ 'package.json': both }))).rejects.toThrow(
      /^Multiple package managers declared in package.json: .*engines\.yarn \(1\.x\), packageManager \(pnpm@9\.0\.0\)/,
    );
  });

  it('a yarnPath naming a file the code lacks is the buildpack error', async () => {
    const lock = '__metadata:\n  version: 8\n';
    const dir = appDir({
      'package.json': PKG,
      'yarn.lock': lock,
      '.yarnrc.yml': 'yarnPath: .yarn/releases/yarn-4.js\n',
    });
    await expect(resolvePackageManager(dir)).rejects.toThrow(/^Yarn was not found: .*\.yarn\/releases\/yarn-4\.js/);
  });
});

// The versions published in the npm registry, asked through the host's npm as the builds ask them.
describe('the manager version, as the buildpack picks it (through the host npm)', () => {
  const berry = '__metadata:\n  version: 8\n';
  const yarn1 = '# yarn lockfile v1\n';
  it('engines.pnpm / engines.yarn ranges; Yarn 2+ versions come from @yarnpkg/cli-dist; Yarn 1.22.x by default', async () => {
    const pnpm = await resolvePackageManager(
      appDir({
        'package.json': JSON.stringify({ engines: { pnpm: '9.x' } }),
        'pnpm-lock.yaml': 'lockfileVersion: 9\n',
      }),
    );
    expect(pnpm.tool).toMatchObject({ pkg: 'pnpm', version: expect.stringMatching(/^9\.\d+\.\d+$/) });
    expect(pnpm.lines).toContain('engines.pnpm (package.json):   9.x');
    const four = await resolvePackageManager(
      appDir({ 'package.json': JSON.stringify({ engines: { yarn: '4.x' } }), 'yarn.lock': berry, '.yarnrc.yml': '' }),
    );
    expect(four).toMatchObject({ berry: true, pnp: true, tool: { pkg: '@yarnpkg/cli-dist' } });
    expect(four.tool?.version).toMatch(/^4\.\d+\.\d+$/);
    const classic = await resolvePackageManager(appDir({ 'package.json': PKG, 'yarn.lock': yarn1 }));
    expect(classic).toMatchObject({ berry: false, tool: { pkg: 'yarn', version: expect.stringMatching(/^1\.22\./) } });
  });

  it('a Yarn 2+ lockfile with no version anywhere, a version nobody published: the errors say what to do', async () => {
    await expect(resolvePackageManager(appDir({ 'package.json': PKG, 'yarn.lock': berry }))).rejects.toThrow(
      /^The '\.yarnrc\.yml' file is not found: .*yarn set version berry/,
    );
    const missing = JSON.stringify({ packageManager: 'yarn@9.99.0' });
    await expect(resolvePackageManager(appDir({ 'package.json': missing, 'yarn.lock': berry }))).rejects.toThrow(
      /^packageManager \(package\.json\): no published version of @yarnpkg\/cli-dist satisfies "9\.99\.0" \(the nearest are /,
    );
  });
});

describe("the manager version for the app's Node.js", () => {
  it("the default pnpm is the newest whose engines.node accepts the app's Node.js, as npm install -g under it picks", async () => {
    const dir = appDir({ 'package.json': '{}', 'pnpm-lock.yaml': 'lockfileVersion: 9\n' });
    const latest = (await resolvePackageManager(dir)).tool?.version ?? '';
    const forOld = (await resolvePackageManager(dir, '16.0.0')).tool?.version ?? '';
    const accepts = (v: string) =>
      String(execFileSync('npm', ['view', `pnpm@${v}`, 'engines.node'], { encoding: 'utf8' })).trim();
    // The newest pnpm refuses Node.js 16 (pnpm 9 asks for >=18.12): the version picked for it is an older one that accepts it.
    expect(semver.satisfies('16.0.0', accepts(latest))).toBe(false);
    expect(semver.satisfies('16.0.0', accepts(forOld))).toBe(true);
    expect(semver.lt(forOld, latest)).toBe(true);
  });
});

describe('lockfile URLs moved to the host registry', () => {
  const mirror = 'https://mirror.example.test/npm/';
  it('registry tarball URLs, scoped or not, keep their file and hash; other URLs stay', () => {
    expect(onRegistry('https://registry.yarnpkg.com/ms/-/ms-2.1.3.tgz#574c81', mirror)).toBe(
      'https://mirror.example.test/npm/ms/-/ms-2.1.3.tgz#574c81',
    );
    expect(onRegistry('https://npm.corp.test/api/npm/@types/node/-/node-1.0.0.tgz', mirror)).toBe(
      'https://mirror.example.test/npm/@types/node/-/node-1.0.0.tgz',
    );
    for (const other of ['git+https://github.com/a/b.git#abc', 'https://example.test/b.tgz', 'file:../x', 'not a url'])
      expect(onRegistry(other, mirror)).toBe(other);
  });

  it('package-lock.json and yarn.lock (v1) rewritten, the rest as it was', () => {
    const lock = {
      lockfileVersion: 3,
      packages: { 'node_modules/ms': { version: '2.1.3', resolved: 'https://registry.npmjs.org/ms/-/ms-2.1.3.tgz' } },
    };
    expect(JSON.parse(npmLockOnRegistry(JSON.stringify(lock), mirror)).packages['node_modules/ms']).toEqual({
      version: '2.1.3',
      resolved: 'https://mirror.example.test/npm/ms/-/ms-2.1.3.tgz',
    });
    const yarn = 'ms@2.1.3:\n  version "2.1.3"\n  resolved "https://registry.yarnpkg.com/ms/-/ms-2.1.3.tgz#574c"\n';
    expect(yarnLockOnRegistry(yarn, mirror)).toBe(
      'ms@2.1.3:\n  version "2.1.3"\n  resolved "https://mirror.example.test/npm/ms/-/ms-2.1.3.tgz#574c"\n',
    );
  });
});

describe('the lifecycle scripts', () => {
  const plan = (name: 'npm' | 'yarn' | 'pnpm', scripts: Record<string, string>, berry = false): PackageManagerPlan => ({
    name,
    berry,
    lockfile: null,
    tool: name === 'npm' ? null : { pkg: name, version: '1.0.0' },
    vendored: null,
    pnp: false,
    lines: [],
    pkg: { scripts, engines: {}, packageManager: null, cacheDirectories: [], hasDependencies: true, workspaces: false },
  });
  const tool = { from: '/cache/tools/x@1.0.0', bin: 'bin/x.js' };
  const sh = (script: string | null) => {
    if (script === null) return;
    execFileSync('sh', ['-n', '-c', script]); // the shell parses it
  };

  it('no build script: the install and the prune in the dependency step, no code step', () => {
    const s = nodeScripts({ plan: plan('npm', { start: 'node x' }), tool: null, checkedInModules: false }, true, []);
    expect(s.code).toBeNull();
    expect(s.dependencies).toMatch(/Installing dependencies[\s\S]*Build[\s\S]*Pruning devDependencies/);
    sh(s.dependencies);
  });

  it('a build script: the prune after it, in the code step; each manager runs its own commands', () => {
    for (const [name, install, prune] of [
      ['npm', 'npm ci $dev --offline', 'npm prune --omit=dev'],
      ['yarn', '--frozen-lockfile --ignore-engines --offline', '--ignore-scripts --offline'],
      ['pnpm', 'pnpm install --prod=false --frozen-lockfile', 'pnpm prune --prod'],
    ] as const) {
      const s = nodeScripts({ plan: plan(name, { build: 'b' }), tool, checkedInModules: false }, true, ['.cache']);
      expect(s.dependencies).toContain(install);
      expect(s.dependencies).not.toContain('Pruning');
      expect(s.code).toMatch(/Restoring cache[\s\S]*-----> Build[\s\S]*Caching build[\s\S]*Pruning devDependencies/);
      expect(s.code).toContain(prune);
      sh(s.dependencies);
      sh(s.code);
    }
    const berry = nodeScripts({ plan: plan('yarn', { build: 'b' }, true), tool, checkedInModules: false }, true, []);
    expect(berry.dependencies).toContain('yarn install --immutable');
    expect(berry.code).toContain('yarn workspaces focus --all --production');
    sh(berry.dependencies);
    sh(berry.code);
  });

  it('scalingo-prebuild: the whole lifecycle over the code, in the buildpack order', () => {
    const scripts = { 'scalingo-prebuild': 'p', build: 'b', 'scalingo-postbuild': 'q', 'scalingo-cleanup': 'c' };
    const s = nodeScripts({ plan: plan('npm', scripts), tool: null, checkedInModules: false }, false, []);
    expect(s.dependencies).toBeNull();
    expect(s.code).toMatch(
      /Prebuild[\s\S]*Installing dependencies[\s\S]*Detected both[\s\S]*Running scalingo-postbuild[\s\S]*Pruning[\s\S]*Cleanup/,
    );
    expect(s.code).not.toContain('npm run build');
    sh(s.code);
  });

  it('cacheDirectories: relative paths inside the app only', () => {
    expect(cacheDirectories(['.next/cache', './bower_components/', '../up', '/abs', 'a;rm -rf /'])).toEqual({
      kept: ['.next/cache', 'bower_components'],
      refused: ['../up', '/abs', 'a;rm -rf /'],
    });
  });

  it("the app's environment as sh assignments, quotes escaped; names a shell refuses and the buildpack's blacklist left out", () => {
    const env = shellEnv({ A: "it's", B_2: '$(x) `y`', 'BAD-NAME': 'z', PATH: '/nowhere', LD_PRELOAD: '/x.so' });
    expect(env).toBe("A='it'\\''s'\nB_2='$(x) `y`'\n");
    expect(execFileSync('sh', ['-c', `${env}printf '%s|%s' "$A" "$B_2"`], { encoding: 'utf8' })).toBe("it's|$(x) `y`");
  });
});
