import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fetchPackage } from '../../src/modules/deployments/registry-packages.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { routerGet } from '../support/apps.ts';
import { useBuildApps } from '../support/build-apps.ts';
import { docker, dockerPs } from '../support/docker-cli.ts';

// Issue 34, points 2 and 3: the lockfile picks the package manager (npm, Yarn 1, Yarn 4 by
// `packageManager`, pnpm), whose packages the host downloads for the offline build container; the
// buildpack's lifecycle runs (install with the devDependencies, `build`, the prune). Each fixture's build
// uses a devDependency (left-pad) that the running image no longer has: observed in the app's container
// (docker exec) and in its answer through the router, which reads the build's output and the app's
// variable BUILT_BY, seen by the build.
const LONG = 900_000;
const FIXTURES = resolve(import.meta.dirname, '../../fixtures/apps');

describe('package managers and the Node.js build lifecycle (real Docker)', () => {
  const b = useBuildApps(LONG);
  const { webContainer } = b;
  /** The fixture's files, changed by `edit`, deployed to a new app with the variables `env`. */
  const deploy = (app: string, fixture: string, env: Record<string, string>, edit?: (dir: string) => void) =>
    b.deploy(
      app,
      (dir) => {
        cpSync(join(FIXTURES, fixture), dir, { recursive: true });
        edit?.(dir);
      },
      env,
    );
  const has = (engineId: string, path: string) => {
    try {
      docker('exec', engineId, 'test', '-e', path);
      return true;
    } catch {
      return false;
    }
  };
  const setScripts = (dir: string, scripts: Record<string, string>, more: Record<string, unknown> = {}) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ ...pkg, ...more, scripts: { ...pkg.scripts, ...scripts } }),
    );
  };

  const managers: [string, string, RegExp][] = [
    ['pm-npm', 'npm', /Installing node modules\n/],
    ['pm-yarn1', 'Yarn 1', /Installed yarn 1\.22\.22[\s\S]*Installing node modules \(yarn\.lock\)/],
    [
      'pm-yarn4',
      'Yarn 4 (packageManager)',
      /packageManager \(package\.json\): yarn@4\.9\.2[\s\S]*Running 'yarn install'/,
    ],
    ['pm-pnpm', 'pnpm (packageManager)', /Using pnpm 9\.15\.9[\s\S]*Running 'pnpm install' with pnpm-lock\.yaml/],
  ];
  for (const [fixture, what, install] of managers)
    it(
      `${what}: the build uses a devDependency, pruned from the running image; the app's variables reach the build`,
      async () => {
        const { d, output } = await deploy(fixture, fixture, { BUILT_BY: `${fixture} env` });
        expect(d.status, output).toBe('success');
        expect(output).toMatch(install);
        for (const step of ['Installing dependencies', 'Build', 'Pruning devDependencies'])
          expect(output).toContain(`-----> ${step}\n`);
        const web = await webContainer(fixture);
        expect(has(web, '/app/node_modules/ms')).toBe(true);
        expect(has(web, '/app/node_modules/left-pad')).toBe(false);
        expect(docker('exec', web, 'cat', '/app/dist/out.txt')).toBe(`*****built by ${fixture} env`);
        expect((await routerGet(b.h.emu.urls.routerPort, fixture)).body).toBe(
          `*****built by ${fixture} env 1h left-pad:absent`,
        );
      },
      LONG,
    );

  it(
    "Yarn 4 in Plug'n'Play mode from a release vendored in the project (yarnPath): the devDependency is gone from .pnp.cjs",
    async () => {
      const release = join(await fetchPackage('@yarnpkg/cli-dist', '4.9.2'), 'bin', 'yarn.js');
      const { d, output } = await deploy('pm-yarn-pnp', 'pm-yarn4', {}, (dir) => {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        delete pkg.packageManager;
        writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
        mkdirSync(join(dir, '.yarn/releases'), { recursive: true });
        cpSync(release, join(dir, '.yarn/releases/yarn-4.9.2.cjs'));
        writeFileSync(join(dir, '.yarnrc.yml'), 'yarnPath: .yarn/releases/yarn-4.9.2.cjs\n');
        writeFileSync(join(dir, 'Procfile'), 'web: yarn node server.js\n');
      });
      expect(d.status, output).toBe('success');
      expect(output).toContain('Using the Yarn release vendored in the project (.yarn/releases/yarn-4.9.2.cjs)');
      const web = await webContainer('pm-yarn-pnp');
      expect(has(web, '/app/.pnp.cjs')).toBe(true);
      expect(has(web, '/app/node_modules')).toBe(false);
      expect((await routerGet(b.h.emu.urls.routerPort, 'pm-yarn-pnp')).body).toBe(
        '*****built by nobody 1h left-pad:absent',
      );
    },
    LONG,
  );

  it(
    'scalingo-prebuild, then scalingo-postbuild instead of build, then scalingo-cleanup',
    async () => {
      const { d, output } = await deploy('pm-hooks', 'pm-npm', {}, (dir) =>
        setScripts(dir, {
          'scalingo-prebuild': 'echo prebuild > prebuild.txt',
          build: 'echo the build script ran && exit 3',
          'scalingo-postbuild': 'node build.js',
          'scalingo-cleanup': 'rm build.js',
        }),
      );
      expect(d.status, output).toBe('success');
      expect(output).toContain('-----> Prebuild\n       Running scalingo-prebuild');
      expect(output).toContain('Detected both "build" and "scalingo-postbuild" scripts');
      expect(output).not.toContain('the build script ran');
      expect(output).toContain('-----> Cleanup\n       Running scalingo-cleanup');
      const web = await webContainer('pm-hooks');
      expect(docker('exec', web, 'cat', '/app/prebuild.txt')).toBe('prebuild');
      expect(has(web, '/app/build.js')).toBe(false);
      expect(has(web, '/app/node_modules/left-pad')).toBe(false);
      expect((await routerGet(b.h.emu.urls.routerPort, 'pm-hooks')).body).toBe(
        '*****built by nobody 1h left-pad:absent',
      );
    },
    LONG,
  );

  it(
    'NPM_CONFIG_PRODUCTION=false keeps the devDependencies; NODE_BUILD_FLAGS; cacheDirectories are kept between builds',
    async () => {
      const env = { NPM_CONFIG_PRODUCTION: 'false', NODE_BUILD_FLAGS: '--from-flags' };
      const counter =
        "const fs=require('fs');fs.mkdirSync('build-cache',{recursive:true});" +
        "const n=Number(fs.existsSync('build-cache/n')?fs.readFileSync('build-cache/n','utf8'):0)+1;" +
        "fs.writeFileSync('build-cache/n',String(n));fs.writeFileSync('dist/n.txt',String(n));";
      const edit = (dir: string) => {
        writeFileSync(join(dir, 'count.js'), counter);
        setScripts(dir, { build: 'node build.js' }, { cacheDirectories: ['build-cache'] });
        writeFileSync(
          join(dir, 'build.js'),
          `${readFileSync(join(dir, 'build.js'), 'utf8')}\nrequire('./count.js');\n`,
        );
      };
      const { d, output } = await deploy('pm-keep-dev', 'pm-npm', env, edit);
      expect(d.status, output).toBe('success');
      expect(output).toContain("Skipping because NPM_CONFIG_PRODUCTION is 'false'");
      expect(output).toContain('Running with --from-flags flags');
      expect(output).toContain('- build-cache (not cached - skipping)');
      const web = await webContainer('pm-keep-dev');
      expect(has(web, '/app/node_modules/left-pad')).toBe(true);
      expect((await routerGet(b.h.emu.urls.routerPort, 'pm-keep-dev')).body).toBe(
        '*****built by nobody --from-flags 1h left-pad:present',
      );
      expect(docker('exec', web, 'cat', '/app/dist/n.txt')).toBe('1');
      // The same code again: the build runs again and finds its cache directory from the first one.
      const second = await b.redeploy('pm-keep-dev');
      expect(second.d.status, second.output).toBe('success');
      const out2 = second.output;
      expect(out2).toContain('Reusing the dependency layer');
      expect(out2).toContain('       - build-cache\n');
      expect(docker('exec', await webContainer('pm-keep-dev'), 'cat', '/app/dist/n.txt')).toBe('2');
      // NODE_MODULES_CACHE=false: no cache directory restored, the dependency layer installed again.
      const off = [{ name: 'NODE_MODULES_CACHE', value: 'false' }];
      expect((await b.h.call('PUT', '/v1/apps/pm-keep-dev/variables', { body: { variables: off } })).status).toBe(200);
      const third = await b.redeploy('pm-keep-dev');
      const out3 = third.output;
      expect(third.d.status, out3).toBe('success');
      expect(out3).toContain('Caching has been disabled because NODE_MODULES_CACHE=false');
      expect(out3).not.toContain('Reusing the dependency layer');
      expect(out3).toContain('-----> Installing dependencies');
      expect(docker('exec', await webContainer('pm-keep-dev'), 'cat', '/app/dist/n.txt')).toBe('1');
    },
    LONG,
  );

  /** A node_modules in the code, holding an `ms` of its own that answers "checked-in". */
  const checkIn = (dir: string) => {
    mkdirSync(join(dir, 'node_modules', 'ms'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/ms/package.json'), '{"name":"ms","version":"2.1.3","main":"index.js"}');
    writeFileSync(join(dir, 'node_modules/ms/index.js'), "module.exports = () => 'checked-in';\n");
  };

  it(
    'a checked-in node_modules: npm rebuilds it and installs what is missing; Yarn removes it and installs the lockfile',
    async () => {
      const npm = await deploy('pm-modules-npm', 'pm-npm', {}, checkIn);
      expect(npm.d.status, npm.output).toBe('success');
      expect(npm.output).toContain('node_modules checked into source control');
      expect(npm.output).toContain('Prebuild detected (node_modules already exists)');
      expect((await routerGet(b.h.emu.urls.routerPort, 'pm-modules-npm')).body).toBe(
        '*****built by nobody checked-in left-pad:absent',
      );
      const yarn = await deploy('pm-modules-yarn', 'pm-yarn1', {}, checkIn);
      expect(yarn.d.status, yarn.output).toBe('success');
      expect(yarn.output).toContain('node_modules checked into source control');
      expect((await routerGet(b.h.emu.urls.routerPort, 'pm-modules-yarn')).body).toBe(
        '*****built by nobody 1h left-pad:absent',
      );
    },
    LONG,
  );

  /** A deployment that must fail in build-error with `line`, leaving no image and no build container of it. */
  const failsCleanly = async (app: string, edit: (dir: string) => void, line: RegExp) => {
    const { d, output } = await deploy(app, 'pm-npm', {}, edit);
    expect(d.status, output).toBe('build-error');
    expect(output).toMatch(line);
    expect(output).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m);
    expect(docker('images', '-q', '--filter', `label=${LABELS.deploymentId}=${d.id}`)).toBe('');
    expect(dockerPs([`${LABELS.deploymentId}=${d.id}`], true)).toEqual([]);
  };

  it(
    'two lockfiles: the buildpack error, nothing built',
    async () => {
      await failsCleanly(
        'pm-two-locks',
        (dir) => cpSync(join(FIXTURES, 'pm-yarn1', 'yarn.lock'), join(dir, 'yarn.lock')),
        /Build failed: Multiple lockfiles found: several package managers \(npm,Yarn\)/,
      );
    },
    LONG,
  );

  it(
    'a corrupt lockfile: named, nothing built',
    async () => {
      await failsCleanly(
        'pm-corrupt-lock',
        (dir) =>
          writeFileSync(join(dir, 'package-lock.json'), '{"name": "pm-npm", "lockfileVersion": 3, "packages": {'),
        /Build failed: package-lock\.json cannot be read \(.*\): it is corrupt/,
      );
    },
    LONG,
  );

  it(
    'a package the registry answers 404 for: npm says which, nothing built',
    async () => {
      await failsCleanly(
        'pm-registry-404',
        (dir) => {
          rmSync(join(dir, 'package-lock.json'));
          const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
          pkg.dependencies['scalingo-emulator-no-such-package-34'] = '1.0.0';
          writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
        },
        /Build failed: npm could not download the packages through \S+ \(on the emulator host\): .*404.*scalingo-emulator-no-such-package-34/,
      );
    },
    LONG,
  );

  it(
    'a pnpm version that does not exist: the nearest published ones named, nothing built',
    async () => {
      await failsCleanly(
        'pm-no-such-pnpm',
        (dir) => {
          rmSync(join(dir, 'package-lock.json'));
          cpSync(join(FIXTURES, 'pm-pnpm', 'pnpm-lock.yaml'), join(dir, 'pnpm-lock.yaml'));
          setScripts(dir, {}, { packageManager: 'pnpm@99.1.0' });
        },
        /Build failed: packageManager \(package\.json\): no published version of pnpm satisfies "99\.1\.0" \(the nearest are \d+\.\d+\.\d+/,
      );
    },
    LONG,
  );
});
