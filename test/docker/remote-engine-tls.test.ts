import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { resolveEngineEndpoint } from '../../src/runtime/engine-endpoint.ts';
import { EngineUnavailableError, LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, routerGet, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, removeInstance } from '../support/docker-cli.ts';
import { startTlsEngine, type TlsEngine } from '../support/tls-engine.ts';

// docker.host = tcp://… with docker.tls: the emulator drives an engine over TCP with both sides'
// certificates verified. The machine has one engine, so the TLS endpoint is a proxy to its socket
// that demands a client certificate as `dockerd --tlsverify` does (test/support/tls-engine.ts).
const local = resolveEngineEndpoint({}, process.env);
if (local.kind !== 'socket')
  throw new Error(`these tests put a TLS endpoint in front of the local socket; DOCKER_HOST is ${local.label}`);

describe('a remote engine over TCP with TLS (real Docker behind a TLS endpoint)', () => {
  let engine: TlsEngine;
  let h: Harness;
  const dir = copyFixture('busybox-web');

  beforeAll(async () => {
    engine = await startTlsEngine(local.socketPath);
    h = await startEmulator({
      intervals: FAST,
      docker: { host: engine.host, tls: { certPath: engine.goodCerts } },
      apps: [{ name: 'tls-app', dir }],
    });
    await waitForStatus(h, 'tls-app', 'running');
  });
  afterAll(async () => {
    await h?.stop();
    if (h) removeInstance(h.emu.instanceId);
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys and scales through the TLS endpoint: Docker runs the containers, the router reaches them', async () => {
    expect((await h.call('GET', '/_emulator/health', { as: null })).body.subsystems.docker).toMatchObject({
      status: 'ok',
      version: expect.any(String),
    });
    const res = await h.call('POST', '/v1/apps/tls-app/scale', { body: { containers: [{ name: 'web', amount: 2 }] } });
    expect(res.status).toBe(202);
    expect(await waitForOperation(h, res.headers.get('location')!)).toMatchObject({ status: 'done' });
    const web = dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=tls-app`, `${LABELS.type}=web`]);
    expect(web).toHaveLength(2);
    // Published on loopback only, as with the local socket.
    for (const c of web) expect(docker('port', c.id, '5000')).toMatch(/^127\.0\.0\.1:\d+$/);
    const answers = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = await routerGet(h.emu.urls.routerPort, 'tls-app');
      expect(r.status).toBe(200);
      answers.add(r.body);
    }
    expect([...answers].sort()).toEqual(['version 1 from web-1\n', 'version 1 from web-2\n']);
    // Every engine call went through the endpoint, authenticated by the emulator's client certificate.
    expect(engine.accepted.length).toBeGreaterThan(0);
    expect(new Set(engine.accepted)).toEqual(new Set(['emulator-client']));
  });

  it('a client certificate the engine did not sign is refused, with a plain error naming the endpoint', async () => {
    const before = engine.refused.length;
    const rt = createDockerRuntime({ host: engine.host, tls: { certPath: engine.rogueClientCerts } });
    try {
      const status = await rt.probe();
      expect(status.ok).toBe(false);
      expect(!status.ok && status.error).toMatch(
        new RegExp(
          `^the Docker engine at ${engine.host.replace(/[.:/]/g, '\\$&')} \\(TLS\\) cannot be reached: .*TLS handshake.*check docker\\.tls`,
        ),
      );
      const err = await rt.list({ [LABELS.instance]: 'nothing' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineUnavailableError);
      expect((err as Error).message).toMatch(/TLS handshake/);
      expect(await rt.available()).toBe(false);
    } finally {
      await rt.close();
    }
    expect(engine.refused.length).toBeGreaterThan(before);
    expect(engine.accepted.filter((cn) => cn !== 'emulator-client')).toEqual([]);
  });

  it('an engine whose certificate another CA signed is not trusted (the client verifies the server)', async () => {
    const rt = createDockerRuntime({ host: engine.host, tls: { certPath: engine.wrongCaCerts } });
    try {
      const status = await rt.probe();
      expect(status.ok).toBe(false);
      expect(!status.ok && status.error).toMatch(
        /TLS handshake failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
      );
      await expect(rt.inspect('0'.repeat(64))).rejects.toBeInstanceOf(EngineUnavailableError);
    } finally {
      await rt.close();
    }
  });

  it('an emulator given the refused certificate starts, says why on /health, and answers 503 for container work', async () => {
    const bad = await startEmulator({
      intervals: FAST,
      docker: { host: engine.host, tls: { certPath: engine.rogueClientCerts } },
    });
    try {
      const health = await bad.call('GET', '/_emulator/health', { as: null });
      expect(health.body.subsystems.docker).toEqual({
        status: 'unavailable',
        error: expect.stringMatching(/TLS handshake.*docker\.tls/),
      });
      expect((await bad.call('POST', '/v1/apps', { body: { app: { name: 'tls-refused' } } })).status).toBe(201);
      const ps = await bad.call('GET', '/v1/apps/tls-refused/ps');
      expect(ps.status).toBe(503);
      expect(ps.body).toEqual({ error: expect.stringMatching(/Docker engine cannot be reached/) });
    } finally {
      await bad.stop();
      removeInstance(bad.emu.instanceId);
    }
  });
});
