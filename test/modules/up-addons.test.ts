import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../../src/cli/up/api-client.ts';
import { parseManifest } from '../../src/cli/up/manifest.ts';
import { ensureAddons, wantedAddons } from '../../src/cli/up/provision.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';

// `up` and the addons of scalingo.json it cannot run (issue 34, point 5), against an emulator whose addons are
// all stand-ins (addons.servers false, the test default): each server-less addon gets one warning line, the
// emulated TCP gateway none, and only a provider the catalogue lacks stops `up`.
describe('up: scalingo.json addons without a server', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator();
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'stand-ins' } } })).status).toBe(201);
  });
  afterAll(() => h.stop());

  it('provisions every known provider; one warning line per stand-in, none for tcp-gateway', async () => {
    const api = apiClient(h.api, TOKENS.dev);
    const manifest = parseManifest(
      JSON.stringify({
        addons: ['postgresql:postgresql-sandbox', { plan: 'mongodb:mongo-sandbox' }, { plan: 'tcp-gateway:tcplb' }],
      }),
    );
    const lines: string[] = [];
    await ensureAddons(api, 'stand-ins', await wantedAddons(api, manifest), (l) => lines.push(l));
    const warnings = lines.filter((l) => l.startsWith('Warning:'));
    expect(warnings).toEqual([
      'Warning: scalingo-postgresql is a stand-in — no PostgreSQL server runs in the emulator, so the app gets no URL variable for it (code that connects to it fails)',
      'Warning: scalingo-mongodb is a stand-in — no MongoDB server runs in the emulator, so the app gets no URL variable for it (code that connects to it fails)',
    ]);
    const { addons } = (await h.call('GET', '/v1/apps/stand-ins/addons')).body;
    expect(addons.map((a: any) => a.addon_provider.id).sort()).toEqual([
      'scalingo-mongodb',
      'scalingo-postgresql',
      'tcp-gateway',
    ]);
  });

  it('a provider the catalogue lacks is the one error, naming the known ones', async () => {
    const api = apiClient(h.api, TOKENS.dev);
    const manifest = parseManifest(JSON.stringify({ addons: ['cassandra:small'] }));
    await expect(wantedAddons(api, manifest)).rejects.toThrow(
      /^scalingo\.json: addons\.0: unknown addon "cassandra" \(known: postgresql, mysql, redis, mongodb, elasticsearch, influxdb, tcp-gateway\)$/,
    );
  });
});
