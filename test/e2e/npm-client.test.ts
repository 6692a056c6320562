import { rmSync } from 'node:fs';
import { type Client, clientFromToken } from 'scalingo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { copyFixture, FAST, waitForStatus } from '../support/apps.ts';
import { dockerPs, removeInstance } from '../support/docker-cli.ts';

// The official npm client, unchanged, pointed at the emulator by its two base URLs.
describe('official npm client `scalingo`', () => {
  let h: Harness;
  let client: Client;
  const dir = copyFixture('busybox-web');
  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'npm-bound-app', dir }] });
    client = await clientFromToken(TOKENS.dev, { apiUrl: h.api, authApiUrl: h.api });
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('exchanges the token and reads the user and the regions', async () => {
    expect((await client.Users.self()).username).toBe('dev');
    const regions = await client.Regions.all();
    expect(regions[0]).toMatchObject({ name: 'local', api: h.api, default: true });
  });

  it('creates, lists, finds, updates, renames and destroys apps', async () => {
    const dry = await client.Apps.create({ name: 'npm-dry-app', dry_run: true });
    expect(dry.name).toBe('npm-dry-app');
    const app = await client.Apps.create({ name: 'npm-client-app' });
    expect(app).toMatchObject({ name: 'npm-client-app', status: 'new' });
    expect((await client.Apps.all()).map((a) => a.name)).toEqual(
      expect.arrayContaining(['npm-client-app', 'npm-bound-app']),
    );
    expect((await client.Apps.all()).map((a) => a.name)).not.toContain('npm-dry-app');
    expect((await client.Apps.find('npm-client-app')).id).toBe(app.id);
    const updated = await client.Apps.update(app.id, { force_https: true, router_logs: true });
    expect(updated).toMatchObject({ force_https: true, router_logs: true });
    const renamed = await client.Apps.rename(app.id, 'npm-client-app', 'npm-renamed-app');
    expect(renamed.name).toBe('npm-renamed-app');
    const events = await client.Events.for(app.id);
    expect(events.events.map((e) => e.type)).toEqual(['rename_app', 'edit_app', 'new_app']);
    expect((await client.Events.listEventCategories())[0].name).toBe('app_operations');
    await client.Apps.destroy(app.id, 'npm-renamed-app');
    await expect(client.Apps.find(app.id)).rejects.toMatchObject({
      status: 404,
      data: { resource: 'app', error: 'not found' },
    });
  });

  it('sees the platform’s errors as APIError with status and body', async () => {
    await expect(client.Apps.create({ name: 'Bad Name' })).rejects.toMatchObject({
      status: 422,
      data: { errors: { name: expect.any(Array) } },
    });
    await expect(client.Apps.destroy('npm-bound-app', 'wrong-name')).rejects.toMatchObject({ status: 422 });
  });

  it('scales with an operation it waits for, then lists the containers', async () => {
    await waitForStatus(h, 'npm-bound-app', 'running');
    const res = await client.Containers.scale('npm-bound-app', [{ name: 'web', amount: 2, size: 'M' }]);
    expect(res.formation).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'web', amount: 2 })]));
    await res.operation!.wait();
    expect(res.operation!.status).toBe('done');
    const ps = await client.Containers.processes('npm-bound-app');
    expect(ps.filter((c) => c.type === 'web')).toHaveLength(2);
    expect(dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.type}=web`])).toHaveLength(2);
    const restart = await client.Containers.restart('npm-bound-app', 'web');
    await restart.wait();
    expect(restart.status).toBe('done');
  });

  it('manages tokens on the auth service', async () => {
    const token = await client.Tokens.create('npm-made');
    expect(token.token).toMatch(/^tk-us-/);
    expect((await client.Tokens.all()).map((t) => t.name)).toContain('npm-made');
    await client.Tokens.destroy(token.id);
    expect((await client.Tokens.all()).map((t) => t.name)).not.toContain('npm-made');
  });
});
