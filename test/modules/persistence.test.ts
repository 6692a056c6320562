import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../harness.ts';

describe('state in a data directory', () => {
  it('survives a restart: apps, events, tokens and bearers', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-data-'));
    try {
      const first = await startEmulator({ inMemory: false, dataDir });
      await first.call('POST', '/v1/apps', { body: { app: { name: 'persisted-app' } } });
      const token = (await first.call('POST', '/v1/tokens', { body: { token: { name: 'kept' } } })).body.token.token;
      const bearer = await first.bearer(token);
      await first.stop();
      expect(existsSync(join(dataDir, 'emulator.sqlite'))).toBe(true);

      const second = await startEmulator({ inMemory: false, dataDir });
      try {
        const app = await second.call('GET', '/v1/apps/persisted-app');
        expect(app.status).toBe(200);
        expect(
          (await second.call('GET', '/v1/apps/persisted-app/events')).body.events.map((e: { type: string }) => e.type),
        ).toEqual(['new_app']);
        // The per-data-dir signing key is kept: a bearer made before the restart still works.
        expect((await second.call('GET', '/v1/apps', { as: { bearer } })).status).toBe(200);
        expect(
          (
            await second.call('POST', '/v1/tokens/exchange', {
              as: null,
              headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
            })
          ).status,
        ).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('--in-memory writes nothing and forgets', async () => {
    const a = await startEmulator({ inMemory: true });
    await a.call('POST', '/v1/apps', { body: { app: { name: 'forgotten-app' } } });
    expect(a.emu.dataDir).toBeNull();
    await a.stop();
    const b = await startEmulator({ inMemory: true });
    expect((await b.call('GET', '/v1/apps/forgotten-app')).status).toBe(404);
    await b.stop();
  });
});
