import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadIgnore } from '../../src/cli/up/ignore.ts';
import { createLogPrinter, splitLogLine } from '../../src/cli/up/log-printer.ts';
import { manifestVariables, parseManifest } from '../../src/cli/up/manifest.ts';
import { appNameFrom } from '../../src/cli/up/project.ts';
import { UpError } from '../../src/cli/up/up-error.ts';
import { watchFolder } from '../../src/cli/up/watch.ts';
import { eventually } from '../support/docker-cli.ts';

// The pure pieces of `up`: the manifest's rules, the generators, .gitignore matching, names, log lines.
describe('scalingo.json', () => {
  it('reads the documented fields, both addon forms and string booleans', () => {
    const m = parseManifest(
      JSON.stringify({
        name: 'x',
        stack: 'scalingo-22',
        env: { A: { value: '1', required: 'true' } },
        addons: ['redis:redis-sandbox', { plan: 'postgresql:postgresql-sandbox', options: { version: '15' } }],
        formation: { web: { amount: 2, size: 'S' } },
        scripts: { 'first-deploy': 'seed' },
      }),
    );
    expect(m.addons).toEqual([
      { plan: 'redis:redis-sandbox', options: undefined },
      { plan: 'postgresql:postgresql-sandbox', options: { version: '15' } },
    ]);
    expect(m.env?.A.required).toBe(true);
    expect(m.formation?.web).toEqual({ amount: 2, size: 'S' });
  });

  it('says where JSON is broken and which field is wrong, in one line', () => {
    expect(() => parseManifest('{\n  "env": {\n    "A": 1,\n  }\n}')).toThrow(
      /^scalingo\.json: invalid JSON at line 4 column 3: /,
    );
    expect(() => parseManifest('{"formation": {"web": {"amount": -1}}}')).toThrow(
      /^scalingo\.json: formation\.web\.amount /,
    );
    expect(() => parseManifest('{"unknown": 1}')).toThrow('scalingo.json: (top level) has an unknown field (unknown)');
    expect(() => parseManifest('{"env": {"A": {"value": "x", "generator": "secret"}}}')).toThrow(
      'scalingo.json: env.A takes a value or a generator, not both',
    );
    expect(() => parseManifest('{"env": {"A": {"generator": "template"}}}')).toThrow(
      'the template generator needs a template',
    );
    expect(() => parseManifest('{"env": {"1A": {"value": "x"}}}')).toThrow('scalingo.json: env.1A is not a valid name');
    expect(() => parseManifest('[')).toThrow(UpError);
  });

  it('generates values once; takes required ones from the shell; refuses a missing one', () => {
    const env = parseManifest(
      JSON.stringify({
        env: {
          S: { generator: 'secret' },
          U: { generator: 'url', template: '%URL%/admin' },
          T: { generator: 'template', template: '%APP%-%PR_NUMBER%-%OTHER%' },
          R: { required: true, description: 'the key' },
          V: { value: 'v' },
        },
      }),
    ).env;
    const ctx = { app: 'my-app', url: 'http://my-app.localhost:5180', existing: {}, shell: { R: 'from-shell' } };
    const vars = manifestVariables(env, ctx);
    expect(vars.S).toMatch(/^[0-9a-f]{64}$/);
    expect(manifestVariables(env, ctx).S).not.toBe(vars.S);
    expect(vars).toMatchObject({
      U: 'http://my-app.localhost:5180/admin',
      T: 'my-app--%OTHER%',
      R: 'from-shell',
      V: 'v',
    });
    // Already set on the app: generated values are kept, a required one is satisfied.
    const again = manifestVariables(env, {
      ...ctx,
      existing: { S: 'kept', U: 'kept', T: 'kept', R: 'set' },
      shell: {},
    });
    expect(again).toEqual({ V: 'v' });
    expect(() => manifestVariables(env, { ...ctx, shell: {} })).toThrow(
      'scalingo.json: env R is required (the key): set it in the shell (R=… scalingo-emulator up)',
    );
  });
});

describe('.gitignore matching', () => {
  it('matches names anywhere, anchored paths, directories, and always .git / node_modules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'up-ignore-'));
    try {
      writeFileSync(join(dir, '.gitignore'), '# comment\n*.log\n/build\ncache/\ndocs/**/*.pdf\n!keep.log\n');
      const ignored = loadIgnore(dir);
      expect(ignored('a.log', false)).toBe(true);
      expect(ignored('src/deep/b.log', false)).toBe(true);
      expect(ignored('build', true)).toBe(true);
      expect(ignored('build/x.js', false)).toBe(true);
      expect(ignored('src/build', true)).toBe(false);
      expect(ignored('cache', true)).toBe(true);
      expect(ignored('cache', false)).toBe(false);
      expect(ignored('src/cache/x', false)).toBe(true);
      expect(ignored('docs/a/b/c.pdf', false)).toBe(true);
      expect(ignored('docs/c.txt', false)).toBe(false);
      expect(ignored('node_modules/x/index.js', false)).toBe(true);
      expect(ignored('.git/HEAD', false)).toBe(true);
      expect(ignored('server.js', false)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('honours negations as git does: a file re-included, not one under an excluded directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'up-ignore-'));
    try {
      writeFileSync(
        join(dir, '.gitignore'),
        '*.log\n!keep.log\n/build/\n!build/kept.js\ndist/*\n!dist/public/\nREADME.MD\n',
      );
      const ignored = loadIgnore(dir);
      expect(ignored('keep.log', false)).toBe(false);
      expect(ignored('logs/keep.log', false)).toBe(false);
      expect(ignored('other.log', false)).toBe(true);
      // git cannot re-include a file whose parent directory is excluded.
      expect(ignored('build/kept.js', false)).toBe(true);
      expect(ignored('dist/x.js', false)).toBe(true);
      expect(ignored('dist/public', true)).toBe(false);
      expect(ignored('dist/public/app.js', false)).toBe(false);
      // Case-sensitive, as git on Linux (core.ignorecase false).
      expect(ignored('README.md', false)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the watcher follows negations: a re-included file redeploys, an ignored one does not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'up-watch-'));
    const changes: string[][] = [];
    writeFileSync(join(dir, '.gitignore'), '*.log\n!keep.log\n');
    const w = await watchFolder(
      dir,
      50,
      (paths) => changes.push(paths),
      () => undefined,
    );
    try {
      // In one burst: the change names every file the watcher saw (other.log too, were it watched).
      writeFileSync(join(dir, 'keep.log'), 'x');
      writeFileSync(join(dir, 'other.log'), 'x');
      await eventually(() => changes.length > 0, { timeoutMs: 10_000, what: 'a change reported' });
      expect(changes).toEqual([['keep.log']]);
    } finally {
      await w.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hostile patterns end at once (the matcher never backtracks without end)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'up-ignore-'));
    try {
      writeFileSync(join(dir, '.gitignore'), `${'*a'.repeat(40)}b\n${'**/'.repeat(20)}x\n`);
      const ignored = loadIgnore(dir);
      expect(ignored(`${'a'.repeat(200)}b${'a'.repeat(50)}`, false)).toBe(false);
      expect(ignored('a/b/c/d/e/f/g', false)).toBe(false);
      expect(ignored('a/b/x', false)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('names and lines', () => {
  it('makes a valid app name from a folder name', () => {
    expect(appNameFrom('Shop Front')).toBe('shop-front');
    expect(appNameFrom('api')).toBe('api-local');
    expect(appNameFrom('2024_Project!!')).toBe('project');
    expect(appNameFrom('x'.repeat(80))).toHaveLength(48);
  });

  it('splits the platform log line and prints foreman-style prefixes, coloured per type or plain', () => {
    expect(splitLogLine('2026-01-02 15:04:05.123 +0000 UTC [web-1] hello [x] world')).toEqual({
      container: 'web-1',
      text: 'hello [x] world',
    });
    expect(splitLogLine('garbage')).toBeNull();
    const out = new PassThrough();
    let text = '';
    out.on('data', (c) => (text += c));
    const plain = createLogPrinter(out, false);
    plain.line('web-1', 'a\u0007b');
    expect(text).toBe('web-1        | ab\n');
    text = '';
    const colour = createLogPrinter(out, true);
    colour.line('web-1', 'x');
    colour.line('web-2', 'y');
    colour.line('worker-1', 'z');
    const codes = [...text.matchAll(/\u001b\[(\d+)m(\S+)/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(codes).toEqual(['36:web-1', '36:web-2', '33:worker-1']);
  });
});
