import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { Database } from '../../src/db/database.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { docker } from '../support/docker-cli.ts';

// A snapshot file is untrusted input (issue 37): one whose rows name engine objects this emulator did not make (a
// deployment's image, an addon server's container and volume, all made by someone else on the same engine) is
// imported, restored, and its app deleted: the emulator removes only what carries its own labels, so they survive.
const ADMIN = 'admin-token-for-foreign-objects0';

describe('engine objects named by an imported snapshot but not the emulator’s', () => {
  let h: Harness;
  const tag = randomBytes(4).toString('hex');
  const testLabel = `io.scalingo-emulator.test=foreign-${tag}`;
  const image = `scalingo-emu-foreign/image-${tag}:1`;
  const volume = `scalingo-emu-foreign-volume-${tag}`;
  const addonId = `ad-foreign-${tag}`;
  let container = '';

  beforeAll(async () => {
    // Real addon servers: the deletion of an app goes through their removal path (container by addon id, volume by name).
    h = await startEmulator({ adminToken: ADMIN, addons: { servers: true } });
    docker('tag', DEFAULT_STACK_IMAGE, image);
    docker('volume', 'create', '--label', testLabel, volume);
    // Made by another emulator instance for an addon of the same id (the same snapshot imported twice on one engine).
    container = docker(
      'create',
      '--label',
      testLabel,
      '--label',
      `${LABELS.managed}=1`,
      '--label',
      `${LABELS.owner}=another-instance`,
      '--label',
      `${LABELS.addonId}=${addonId}`,
      DEFAULT_STACK_IMAGE,
      'sleep',
      '600',
    );
  });
  afterAll(async () => {
    await h?.stop();
    // Each may be gone already (a run where the emulator removed them: the failure this file is about).
    docker('rm', '-f', container);
    docker('volume', 'rm', '-f', volume);
    if (docker('images', '-q', image)) docker('rmi', image);
  });

  it('survive the restore and the deletion of the app that names them', async () => {
    const created = await h.call('POST', '/v1/apps', { body: { app: { name: 'foreign-app' } } });
    expect(created.status).toBe(201);
    const appId = created.body.app.id as string;
    const headers = { authorization: `Bearer ${ADMIN}` };
    const snap = await h.call('POST', '/_emulator/snapshots', { as: { bearer: ADMIN } });
    expect(snap.status).toBe(201);
    const file = Buffer.from(
      await (await fetch(`${h.api}/_emulator/snapshots/${snap.body.snapshot.id}`, { headers })).arrayBuffer(),
    );

    const db = new Database(file);
    const now = Date.now();
    db.prepare(
      "INSERT INTO deployments (id, app_id, status, source, source_kind, image, created_at) VALUES (?, ?, 'success', 'x', 'archive', ?, ?)",
    ).run(`dep-foreign-${tag}`, appId, image, now);
    db.prepare(
      "INSERT INTO addons (id, app_id, provider_id, plan_id, resource_id, status, created_at, updated_at) VALUES (?, ?, 'postgresql', 'postgresql-starter-512', 'r', 'running', ?, ?)",
    ).run(addonId, appId, now, now);
    db.prepare(
      'INSERT INTO addon_servers (addon_id, app_id, kind, container_name, alias, username, password, database, memory_bytes, created_at) ' +
        "VALUES (?, ?, 'postgresql', ?, 'db', 'u', 'p', 'd', 536870912, ?)",
    ).run(addonId, appId, volume, now);
    const hostile = db.serialize();
    db.close();

    const restored = await fetch(`${h.api}/_emulator/snapshots/restore`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/vnd.sqlite3' },
      body: new Uint8Array(hostile),
    });
    expect(restored.status).toBe(204);
    // The deletion waits for the engine work of the app's containers, images and addon servers.
    expect((await h.call('DELETE', '/v1/apps/foreign-app?current_name=foreign-app')).status).toBe(204);

    expect(docker('image', 'inspect', '-f', '{{.Id}}', image)).toMatch(/^sha256:/);
    expect(docker('volume', 'inspect', '-f', '{{.Name}}', volume)).toBe(volume);
    expect(docker('inspect', '-f', '{{.State.Status}}', container)).toBe('created');
  });
});
