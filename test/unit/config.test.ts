import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { configSchema } from '../../src/config/schema.ts';

function tmpFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'emu-config-'));
  const f = join(dir, 'emulator.config.json');
  writeFileSync(f, content);
  return f;
}

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({ ignoreDefaultFile: true, env: {} });
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(5100);
    expect(c.rateLimit).toEqual({ enabled: false, perMinute: 60 });
    expect(c.containerSizes.map((s) => s.name)).toEqual(['S', 'M', 'L', 'XL', '2XL']);
    expect(c.users[0].username).toBe('dev');
  });

  it("parses as zod's compiled fast path does (load.ts parses without it, once a process), errors included", () => {
    const input = { port: 7000, rateLimit: { enabled: true }, docker: { publishHost: '127.0.0.2' } };
    const compiled = configSchema.safeParse(input);
    const jitless = configSchema.safeParse(input, { jitless: true });
    expect(compiled.success).toBe(true);
    expect(jitless).toEqual(compiled);
    expect(loadConfig({ ignoreDefaultFile: true, env: {}, overrides: input })).toEqual(compiled.data);
    const bad = { port: 'x', rateLimit: { perMinute: -1 }, unknownKey: 1 };
    const problems = (r: ReturnType<typeof configSchema.safeParse>) => r.error?.issues.map((i) => [i.path, i.code]);
    expect(problems(configSchema.safeParse(bad, { jitless: true }))).toEqual(problems(configSchema.safeParse(bad)));
    expect(problems(configSchema.safeParse(bad))?.length).toBe(3);
  });

  it('applies file < env < flags', () => {
    const file = tmpFile(JSON.stringify({ port: 7000, routerPort: 7001, host: '127.0.0.2' }));
    const c = loadConfig({
      file,
      env: { EMULATOR_PORT: '7100', EMULATOR_RATE_LIMIT: 'true' },
      overrides: { port: 7200 },
    });
    expect(c.port).toBe(7200); // flag wins
    expect(c.routerPort).toBe(7001); // from file
    expect(c.host).toBe('127.0.0.2');
    expect(c.rateLimit.enabled).toBe(true); // from env
    const d = loadConfig({ file, env: { EMULATOR_PORT: '7100' } });
    expect(d.port).toBe(7100); // env beats file
  });

  it('reads emulator.config.json from the working directory', () => {
    const file = tmpFile(JSON.stringify({ port: 6123 }));
    expect(loadConfig({ cwd: join(file, '..'), env: {} }).port).toBe(6123);
  });

  it('reports every problem, with the file, the key and what is expected', () => {
    const file = tmpFile(
      JSON.stringify({ port: 'abc', users: [{ username: 'x', email: 'not-an-email', password: 'p' }], nope: 1 }),
    );
    let err: unknown;
    try {
      loadConfig({ file, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toContain(`${file}: port:`);
    expect(problems).toContain('users[0].email');
    expect(problems).toContain('unknown key(s) "nope"');
  });

  it('rejects malformed JSON, a missing explicit file and bad environment values', () => {
    expect(() => loadConfig({ file: tmpFile('{ nope'), env: {} })).toThrow(/emulator\.config\.json: .*JSON/);
    expect(() => loadConfig({ file: '/nonexistent/emu.json', env: {} })).toThrow(/file not found/);
    expect(() => loadConfig({ ignoreDefaultFile: true, env: { EMULATOR_PORT: 'eighty' } })).toThrow(
      /EMULATOR_PORT: expected a whole number/,
    );
    expect(() => loadConfig({ ignoreDefaultFile: true, env: { EMULATOR_IN_MEMORY: 'maybe' } })).toThrow(
      /EMULATOR_IN_MEMORY: expected true or false/,
    );
  });

  it('checks cross-field rules', () => {
    expect(() => loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { defaultStack: 'nope' } })).toThrow(
      /defaultStack: must be one of the stacks/,
    );
    const dup = { username: 'a', email: 'a@x.test', password: 'p' };
    expect(() => loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { users: [dup, dup] } })).toThrow(
      /used by two users/,
    );
  });

  it('builds.network: none by default; bridge or a network name; host and names Docker would refuse are errors', () => {
    const load = (env: Record<string, string>, overrides = {}) =>
      loadConfig({ ignoreDefaultFile: true, env, overrides });
    expect(load({}).builds.network).toBe('none');
    expect(load({ EMULATOR_BUILDS_NETWORK: 'bridge' }).builds.network).toBe('bridge');
    expect(load({}, { builds: { network: 'my-build-net' } }).builds.network).toBe('my-build-net');
    expect(() => load({ EMULATOR_BUILDS_NETWORK: 'host' })).toThrow(/builds\.network: "host" is refused/);
    expect(() => load({}, { builds: { network: 'container:x' } })).toThrow(
      /builds\.network: must be "none", "bridge" or the name of a user-defined Docker network/,
    );
  });

  it('images.source: auto by default; registry or debian from the file, EMULATOR_IMAGES_SOURCE or the flag; anything else is an error', () => {
    const load = (env: Record<string, string>, overrides = {}) =>
      loadConfig({ ignoreDefaultFile: true, env, overrides });
    expect(load({}).images.source).toBe('auto');
    expect(load({ EMULATOR_IMAGES_SOURCE: 'registry' }).images.source).toBe('registry');
    expect(load({ EMULATOR_IMAGES_SOURCE: 'registry' }, { images: { source: 'debian' } }).images.source).toBe('debian');
    expect(() => load({ EMULATOR_IMAGES_SOURCE: 'docker-hub' })).toThrow(/images\.source/);
  });
});
