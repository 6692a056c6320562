import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCacheDir } from '../../src/modules/caches/build-cache.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';

// An app's build cache goes with a stack change and with the app, from the start: before any request to the caches
// routes (built at their first request) has been made.
describe('build cache: dropped by a stack change and by the deletion, with no caches route called', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startEmulator();
  });
  afterEach(() => h.stop());

  async function appWithCache(name: string): Promise<string> {
    const created = await h.call('POST', '/v1/apps', { body: { app: { name } } });
    expect(created.status).toBe(201);
    const dir = buildCacheDir(h.emu.stateDir, created.body.app.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/layer`, 'x');
    return dir;
  }

  it('the app deleted: its cache directory is removed', async () => {
    const dir = await appWithCache('cache-deleted');
    expect((await h.call('DELETE', '/v1/apps/cache-deleted?current_name=cache-deleted')).status).toBe(204);
    await eventually(() => !existsSync(dir), { timeoutMs: 5_000, what: 'the build cache to go with the app' });
  });

  it('its stack changed: its cache directory is removed, the app stays', async () => {
    const dir = await appWithCache('cache-stack');
    const stacks = (await h.call('GET', '/v1/features/stacks')).body.stacks as { id: string; default: boolean }[];
    const other = stacks.find((s) => !s.default);
    if (!other) throw new Error('the configuration has a single stack: no stack change to make');
    const set = await h.call('PATCH', '/v1/apps/cache-stack', { body: { app: { stack_id: other.id } } });
    expect(set.status).toBe(200);
    await eventually(() => !existsSync(dir), {
      timeoutMs: 5_000,
      what: 'the build cache to go after the stack change',
    });
    expect((await h.call('GET', '/v1/apps/cache-stack')).status).toBe(200);
  });
});
