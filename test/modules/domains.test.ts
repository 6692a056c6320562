import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Upstream } from '../../src/router/proxy.ts';
import { type Clock, systemClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { send, startUpstream, type TestUpstream } from './router.helpers.ts';

const tls = (f: string) => readFileSync(new URL(`../../fixtures/tls/${f}`, import.meta.url), 'utf8');
const CERT = tls('shop.crt'); // CN=shop.localhost, SAN shop.localhost + www.shop.localhost, 10 years
const KEY = tls('shop.key');
const OTHER_KEY = tls('other.key');

describe('domains', () => {
  let h: Harness;
  let up: TestUpstream;
  const served = new Map<string, Upstream[]>();
  // System time, or a fixed far-future time while `ahead` is set (expired certificates).
  let ahead = 0;
  const clock: Clock = { ...systemClock, now: () => Date.now() + ahead }; // timers stay real
  let appId = '';
  beforeAll(async () => {
    up = await startUpstream('shop-web');
    h = await startEmulator({}, { clock, upstreams: (id) => served.get(id) ?? [] });
    appId = (await h.call('POST', '/v1/apps', { body: { app: { name: 'shop-app' } } })).body.app.id;
    served.set(appId, [{ containerName: 'web-1', port: up.port }]);
    await h.call('POST', '/v1/apps', { body: { app: { name: 'other-shop' } } });
  });
  afterAll(async () => {
    await h.stop();
    await up.close();
  });
  const get = (host: string, path = '/') =>
    send(h.emu.urls.routerPort, { host: `${host}:${h.emu.urls.routerPort}`, path });

  it('adds a domain the way go-scalingo sends it and serves the app on it', async () => {
    // Terraform's scalingo_domain: canonical and letsencrypt_enabled always present.
    const res = await h.call('POST', '/v1/apps/shop-app/domains', {
      body: { domain: { name: 'shop.localhost', canonical: false, letsencrypt_enabled: true } },
    });
    expect(res.status).toBe(201);
    expect(res.body.domain).toMatchObject({
      id: expect.any(String),
      app_id: appId,
      name: 'shop.localhost',
      ssl: false,
      canonical: false,
      letsencrypt_enabled: true,
      letsencrypt_status: 'pending_dns',
      validity: null,
    });
    expect(await get('shop.localhost')).toMatchObject({ status: 200, body: 'shop-web' });
    expect(await get('SHOP.localhost.')).toMatchObject({ status: 200 });
    const list = await h.call('GET', '/v1/apps/shop-app/domains');
    expect(list.body.domains.map((d: { name: string }) => d.name)).toEqual(['shop.localhost']);
    expect((await h.call('GET', `/v1/apps/shop-app/domains/${res.body.domain.id}`)).body.domain.name).toBe(
      'shop.localhost',
    );
    const events = await h.call('GET', '/v1/apps/shop-app/events');
    expect(events.body.events[0]).toMatchObject({
      type: 'new_domain',
      type_data: { hostname: 'shop.localhost', ssl: false },
    });
  });

  it('refuses bad names, duplicates, app default hosts and unknown ids', async () => {
    const add = (name: unknown) => h.call('POST', '/v1/apps/shop-app/domains', { body: { domain: { name } } });
    expect((await add('localhost')).body.errors.name[0]).toMatch(/fully qualified/);
    expect((await add('bad_name.example.com')).body.errors.name[0]).toMatch(/not a valid hostname/);
    expect((await add('Shop.Example.com')).body.errors.name).toEqual(['must be in lower case']);
    expect((await add('shop.localhost')).body).toEqual({ errors: { name: ['has already been taken'] } });
    expect((await add('other-shop.localhost')).body.errors.name[0]).toMatch(/default address of the app other-shop/);
    expect((await add(42)).status).toBe(422);
    expect((await h.call('POST', '/v1/apps/shop-app/domains', { body: { name: 'x.example.com' } })).body).toEqual({
      errors: { domain: ['missing field'] },
    });
    expect(
      (
        await h.call('POST', '/v1/apps/shop-app/domains', {
          raw: '{"domain":',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect((await h.call('GET', '/v1/apps/shop-app/domains/nope')).body).toEqual({
      resource: 'domain',
      error: 'not found',
    });
    expect(
      (await h.call('PATCH', '/v1/apps/shop-app/domains/nope', { body: { domain: { canonical: true } } })).status,
    ).toBe(404);
    expect((await h.call('DELETE', '/v1/apps/shop-app/domains/nope')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/shop-app/domains', { as: 'other' })).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/shop-app/domains', { as: null })).status).toBe(401);
  });

  it('installs a PEM certificate, reports subject, key and validity, and removes it with empty strings', async () => {
    const id = (await h.call('GET', '/v1/apps/shop-app/domains')).body.domains[0].id;
    const set = await h.call('PATCH', `/v1/apps/shop-app/domains/${id}`, {
      body: { domain: { tlscert: CERT, tlskey: KEY } },
    });
    expect(set.status).toBe(200);
    expect(set.body.domain).toMatchObject({
      ssl: true,
      ssl_status: 'success',
      tlscert: '/CN=shop.localhost',
      tlskey: 'RSA 2048',
    });
    expect(new Date(set.body.domain.validity).getUTCFullYear()).toBeGreaterThan(new Date().getUTCFullYear() + 5);
    const events = await h.call('GET', '/v1/apps/shop-app/events');
    expect(events.body.events[0]).toMatchObject({
      type: 'edit_domain',
      type_data: { hostname: 'shop.localhost', ssl: true, old_ssl: false },
    });
    // go-scalingo's DomainUnsetCertificate: {"tlscert":"","tlskey":""}.
    const unset = await h.call('PATCH', `/v1/apps/shop-app/domains/${id}`, {
      body: { domain: { tlscert: '', tlskey: '' } },
    });
    expect(unset.body.domain).toMatchObject({ ssl: false, validity: null });
    expect(unset.body.domain).not.toHaveProperty('tlscert');
  });

  it('rejects certificates that are not PEM, do not match the key, the name, or have expired', async () => {
    const id = (await h.call('GET', '/v1/apps/shop-app/domains')).body.domains[0].id;
    const patch = (domain: object) => h.call('PATCH', `/v1/apps/shop-app/domains/${id}`, { body: { domain } });
    expect((await patch({ tlscert: 'hello', tlskey: KEY })).body.errors.tlscert[0]).toMatch(/not a PEM certificate/);
    expect((await patch({ tlscert: CERT.replace(/[A-Z]{8}/, 'AAAAAAAA'), tlskey: KEY })).status).toBe(422);
    expect((await patch({ tlscert: CERT, tlskey: 'nope' })).body.errors.tlskey).toEqual([
      'is not a valid PEM private key',
    ]);
    expect((await patch({ tlscert: CERT, tlskey: OTHER_KEY })).body.errors.tlskey).toEqual([
      'does not match the certificate',
    ]);
    expect((await patch({ tlscert: CERT })).body.errors.tlskey[0]).toMatch(/missing field/);
    expect((await patch({ tlscert: 'x'.repeat(70_000), tlskey: KEY })).body.errors.tlscert[0]).toMatch(/too long/);
    const other = await h.call('POST', '/v1/apps/shop-app/domains', {
      body: { domain: { name: 'api.example.com', tlscert: CERT, tlskey: KEY } },
    });
    expect(other.body.errors.tlscert[0]).toMatch(/not valid for api\.example\.com/);
    ahead = 20 * 365 * 86_400_000;
    try {
      expect((await patch({ tlscert: CERT, tlskey: KEY })).body.errors.tlscert[0]).toMatch(/has expired/);
    } finally {
      ahead = 0;
    }
  });

  it('redirects every other host of the app to the canonical domain (301), path and query kept', async () => {
    const www = await h.call('POST', '/v1/apps/shop-app/domains', {
      body: { domain: { name: 'www.shop.localhost', canonical: true } },
    });
    expect(www.body.domain.canonical).toBe(true);
    const port = h.emu.urls.routerPort;
    const r1 = await get('shop.localhost', '/cart?x=1');
    expect(r1.status).toBe(301);
    expect(r1.headers.location).toBe(`http://www.shop.localhost:${port}/cart?x=1`);
    expect((await get('shop-app.localhost')).headers.location).toBe(`http://www.shop.localhost:${port}/`);
    expect(await get('www.shop.localhost')).toMatchObject({ status: 200, body: 'shop-web' });
    // Setting another domain canonical unsets the first (one per app), as DomainSetCanonical expects.
    const shop = (await h.call('GET', '/v1/apps/shop-app/domains')).body.domains.find(
      (d: { name: string }) => d.name === 'shop.localhost',
    );
    expect(
      (await h.call('PATCH', `/v1/apps/shop-app/domains/${shop.id}`, { body: { domain: { canonical: true } } })).body
        .domain.canonical,
    ).toBe(true);
    const all = (await h.call('GET', '/v1/apps/shop-app/domains')).body.domains;
    expect(all.filter((d: { canonical: boolean }) => d.canonical).map((d: { name: string }) => d.name)).toEqual([
      'shop.localhost',
    ]);
    expect((await get('www.shop.localhost')).headers.location).toBe(`http://shop.localhost:${port}/`);
    // DomainUnsetCanonical: canonical false → no more redirect.
    await h.call('PATCH', `/v1/apps/shop-app/domains/${shop.id}`, { body: { domain: { canonical: false } } });
    expect((await get('www.shop.localhost')).status).toBe(200);
  });

  it('a removed domain is no longer served; a wildcard domain serves its subdomains', async () => {
    const www = (await h.call('GET', '/v1/apps/shop-app/domains')).body.domains.find(
      (d: { name: string }) => d.name === 'www.shop.localhost',
    );
    expect((await h.call('DELETE', `/v1/apps/shop-app/domains/${www.id}`)).status).toBe(204);
    expect((await get('www.shop.localhost')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/shop-app/events')).body.events[0]).toMatchObject({
      type: 'delete_domain',
      type_data: { hostname: 'www.shop.localhost' },
    });
    expect(
      (await h.call('POST', '/v1/apps/shop-app/domains', { body: { domain: { name: '*.stores.localhost' } } })).status,
    ).toBe(201);
    expect(await get('paris.stores.localhost')).toMatchObject({ status: 200, body: 'shop-web' });
  });

  it('a limited collaborator reads domains but cannot change them', async () => {
    await h.call('POST', '/v1/apps/shop-app/collaborators', {
      body: { collaborator: { email: 'other@example.test', is_limited: true } },
    });
    expect((await h.call('GET', '/v1/apps/shop-app/domains', { as: 'other' })).status).toBe(200);
    const res = await h.call('POST', '/v1/apps/shop-app/domains', {
      as: 'other',
      body: { domain: { name: 'limited.example.com' } },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/limited collaborator/);
  });
});
