import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerPs } from '../support/docker-cli.ts';

// The package the way a user gets it: `npm pack`, then installed into a project of its own
// (examples/vitest-consumer), globally, and run with npx — no tsx, no build on that side.
const ROOT = resolve(import.meta.dirname, '../..');
let tmp: string;
let tarball: string;
let consumer: string;

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 240_000,
): Promise<{ code: number | null; out: string }> {
  return new Promise((ok) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, EMULATOR_CONFIG: '', npm_config_update_notifier: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      ok({ code, out: out.replace(/\x1b\[[0-9;]*m/g, '') });
    });
  });
}

/**
 * `npm install` of the tarball from npm's cache (the registry when something is missing). Install
 * scripts are skipped and better-sqlite3's compiled addon is copied from this checkout: on a user's
 * machine prebuild-install downloads that same prebuilt binary, which this offline machine cannot.
 */
async function installInto(dir: string, extra: string[] = []): Promise<string> {
  const r = await run(
    'npm',
    ['install', tarball, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...extra],
    dir,
  );
  expect(r.code, r.out).toBe(0);
  const modules = extra.includes('-g')
    ? join(dir, 'lib/node_modules/scalingo-emulator/node_modules')
    : join(dir, 'node_modules');
  const addon = join(modules, 'better-sqlite3/build/Release');
  mkdirSync(addon, { recursive: true });
  cpSync(
    join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
    join(addon, 'better_sqlite3.node'),
  );
  return modules;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'emu-pkg-'));
  // prepack builds dist/ (esbuild) first, as `npm publish` would.
  const packed = await run('npm', ['pack', '--pack-destination', tmp, '--json'], ROOT);
  expect(packed.code, packed.out).toBe(0);
  tarball = join(
    tmp,
    (JSON.parse(packed.out.slice(packed.out.indexOf('['))) as Array<{ filename: string }>)[0].filename,
  );
  consumer = join(tmp, 'consumer');
  cpSync(join(ROOT, 'examples/vitest-consumer'), consumer, { recursive: true });
  // vitest comes from this checkout (linked below) rather than a second download.
  const pkg = JSON.parse(readFileSync(join(consumer, 'package.json'), 'utf8'));
  delete pkg.devDependencies;
  writeFileSync(join(consumer, 'package.json'), JSON.stringify(pkg, null, 2));
  await installInto(consumer);
  symlinkSync(join(ROOT, 'node_modules/vitest'), join(consumer, 'node_modules/vitest'));
}, 300_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships plain JavaScript, its migrations, the dashboard and type declarations, and needs no tsx', () => {
    const files = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.split('\n');
    for (const f of [
      'package/dist/main.mjs',
      'package/dist/index.mjs',
      'package/dist/dashboard/app.js',
      'package/dist/dashboard/index.html',
      'package/dist/migrations/001_init.sql',
      'package/dist/snapshot-check.cjs', // the snapshot check's child process
      'package/index.d.ts',
    ])
      expect(files).toContain(f);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    const installed = JSON.parse(readFileSync(join(consumer, 'node_modules/scalingo-emulator/package.json'), 'utf8'));
    expect(installed.bin['scalingo-emulator']).toBe('dist/main.mjs');
    expect(installed.private).toBeUndefined();
    expect(
      readFileSync(join(consumer, 'node_modules/scalingo-emulator/dist/main.mjs'), 'utf8').startsWith(
        '#!/usr/bin/env node\n',
      ),
    ).toBe(true);
    expect(existsSync(join(consumer, 'node_modules/tsx'))).toBe(false);
    // Every SQL migration of the sources is in the package.
    expect(readdirSync(join(consumer, 'node_modules/scalingo-emulator/dist/migrations')).sort()).toEqual(
      readdirSync(join(ROOT, 'src/db/migrations')).sort(),
    );
  });

  it("runs the consumer project's vitest file against the installed package", async () => {
    const r = await run(
      join(ROOT, 'node_modules/.bin/vitest'),
      ['run', '--root', consumer, '--reporter', 'verbose'],
      consumer,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/Tests\s+6 passed/);
  });

  it("type-checks the consumer's tests against the package's declarations", async () => {
    const r = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', consumer], consumer);
    expect(r.code, r.out).toBe(0);
    // A wrong use is caught: the declarations are really read.
    writeFileSync(
      join(consumer, 'test/wrong.ts'),
      "import { startEmulator } from 'scalingo-emulator';\nconst e = await startEmulator({ port: 'x' });\ne.clock.advance('1');\n",
    );
    const wrong = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', consumer], consumer);
    rmSync(join(consumer, 'test/wrong.ts'));
    expect(wrong.code).not.toBe(0);
    expect(wrong.out).toContain('test/wrong.ts(2,');
    expect(wrong.out).toContain('test/wrong.ts(3,');
  });

  it('npx scalingo-emulator exec runs a command against a fresh emulator, passes its exit code through and removes the containers', async () => {
    // The command sees the client variables and finds the bound app's container running.
    const config = join(tmp, 'exec.config.json');
    writeFileSync(
      config,
      JSON.stringify({ apps: [{ name: 'exec-site', dir: join(ROOT, 'fixtures/apps/busybox-web') }] }),
    );
    const script = join(tmp, 'check.mjs');
    writeFileSync(
      script,
      `const auth = { authorization: 'Basic ' + Buffer.from(':' + process.env.SCALINGO_API_TOKEN).toString('base64') };
const ps = await (await fetch(process.env.SCALINGO_API_URL + '/v1/apps/exec-site/ps', { headers: auth })).json();
console.log('VARS', process.env.SCALINGO_AUTH_URL === process.env.SCALINGO_API_URL, process.env.SCALINGO_DB_URL === process.env.SCALINGO_API_URL, process.env.SCALINGO_REGION, !!process.env.EMULATOR_ADMIN_TOKEN);
console.log('PS', ps.containers.map((c) => c.label + ':' + c.state).join(','));
process.exit(7);
`,
    );
    const r = await run(
      'npx',
      ['--no-install', 'scalingo-emulator', 'exec', '--config', config, '--', 'node', script],
      consumer,
    );
    expect(r.code, r.out).toBe(7);
    expect(r.out).toContain('VARS true true local true');
    expect(r.out).toContain('PS web-1:running');
    // Not a terminal: structured lines only, no spinner.
    expect(r.out).not.toMatch(/[⠋⠙⠹]/);
    const left = dockerPs(['io.scalingo-emulator.app-name=exec-site'], true);
    expect(left).toEqual([]);
  });

  it('exec runs a single argument through the shell and reports a missing command', async () => {
    const ok = await run(
      'npx',
      ['--no-install', 'scalingo-emulator', 'exec', '--', 'test -n "$SCALINGO_API_TOKEN" && exit 4'],
      consumer,
    );
    expect(ok.code, ok.out).toBe(4);
    const usage = await run('npx', ['--no-install', 'scalingo-emulator', 'exec'], consumer);
    expect(usage.code).toBe(2);
    expect(usage.out).toContain('a command is needed after --');
  });

  it('exec shows progress on a terminal (a pseudo-terminal from script(1))', async () => {
    const r = await run(
      'script',
      ['-qec', "npx --no-install scalingo-emulator exec -- 'echo from-the-command'", '/dev/null'],
      consumer,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Starting the Scalingo emulator/);
    expect(r.out).toMatch(/✔ Starting the Scalingo emulator — http:\/\/127\.0\.0\.1:\d+/);
    expect(r.out).toContain('from-the-command');
    expect(r.out).toMatch(/✔ Stopping the emulator/);
    // No structured log lines on a terminal.
    expect(r.out).not.toContain('"level"');
  });

  it('works as a global install', async () => {
    const prefix = join(tmp, 'global');
    mkdirSync(prefix);
    await installInto(prefix, ['-g', '--prefix', prefix]);
    const bin = join(prefix, 'bin/scalingo-emulator');
    const help = await run(bin, ['--help'], tmp);
    expect(help.code).toBe(0);
    expect(help.out).toContain('scalingo-emulator exec');
    // The dashboard's files come from the package's dist/dashboard/ (no esbuild on this side).
    const probe =
      'const u = process.env.SCALINGO_API_URL; Promise.all([fetch(u + "/_emulator/health"), fetch(u + "/_emulator/app.js").then((r) => r.text())]).then(([h, js]) => process.exit(h.status === 200 && js.includes("/_emulator/dashboard/session") ? 5 : 1))';
    const r = await run(bin, ['exec', '--', 'node', '-e', probe], tmp);
    expect(r.code, r.out).toBe(5);
  });
});
