import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../../src/config/load.ts';
import { translateDockerError } from '../../src/runtime/docker-errors.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { DEFAULT_SOCKET, resolveEngineEndpoint } from '../../src/runtime/engine-endpoint.ts';
import {
  ConflictError,
  EngineUnavailableError,
  NoSuchContainerError,
  NoSuchImageError,
} from '../../src/runtime/runtime.ts';

// Which engine the configuration (or Docker's environment) names, and how engine failures are typed.
const certs = mkdtempSync(join(tmpdir(), 'emu-certs-'));
for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(certs, f), `${f} content`);
afterAll(() => rmSync(certs, { recursive: true, force: true }));

describe('engine endpoint', () => {
  it('defaults to the local socket; docker.socketPath and unix:// DOCKER_HOST name another one', () => {
    expect(resolveEngineEndpoint({}, {})).toMatchObject({ kind: 'socket', socketPath: DEFAULT_SOCKET });
    expect(
      resolveEngineEndpoint({ socketPath: '/run/other.sock' }, { DOCKER_HOST: 'tcp://127.0.0.1:1' }),
    ).toMatchObject({ kind: 'socket', socketPath: '/run/other.sock' });
    expect(resolveEngineEndpoint({}, { DOCKER_HOST: 'unix:///run/env.sock' })).toMatchObject({
      kind: 'socket',
      socketPath: '/run/env.sock',
    });
  });

  it('tcp:// with TLS files (docker.tls or DOCKER_TLS_VERIFY + DOCKER_CERT_PATH), 2376 by default; docker.host wins over DOCKER_HOST', () => {
    const fromEnv = resolveEngineEndpoint(
      {},
      { DOCKER_HOST: 'tcp://10.0.0.5', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs },
    );
    expect(fromEnv).toMatchObject({ kind: 'tcp', host: '10.0.0.5', port: 2376, label: 'tcp://10.0.0.5:2376 (TLS)' });
    expect(fromEnv.kind === 'tcp' && fromEnv.tls?.cert.toString()).toBe('cert.pem content');
    const fromConfig = resolveEngineEndpoint(
      { host: 'tcp://engine.example.test:12376', tls: { certPath: certs, key: join(certs, 'ca.pem') } },
      { DOCKER_HOST: 'unix:///x.sock' },
    );
    expect(fromConfig).toMatchObject({ kind: 'tcp', host: 'engine.example.test', port: 12376 });
    expect(fromConfig.kind === 'tcp' && fromConfig.tls?.key.toString()).toBe('ca.pem content'); // a single file overrides the directory's
  });

  it('refuses plain TCP off this machine, other schemes, and unreadable certificates, in plain words', () => {
    expect(resolveEngineEndpoint({ host: 'tcp://127.0.0.1:2375' }, {})).toMatchObject({
      kind: 'tcp',
      port: 2375,
      tls: null,
    });
    expect(() => resolveEngineEndpoint({}, { DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toThrow(
      /DOCKER_HOST: the engine at tcp:\/\/10\.0\.0\.5:2375 is not on this machine: give docker\.tls/,
    );
    expect(() => resolveEngineEndpoint({ host: 'ssh://me@host' }, {})).toThrow(
      /only unix:\/\/ and tcp:\/\/ engines are supported/,
    );
    expect(() =>
      resolveEngineEndpoint({ host: 'tcp://10.0.0.5', tls: { certPath: join(certs, 'missing') } }, {}),
    ).toThrow(/cannot read the TLS ca file .*missing\/ca\.pem \(ENOENT\)/);
    expect(() => createDockerRuntime({ host: 'tcp://192.0.2.1:2375', env: {} })).toThrow(/not on this machine/);
  });
});

describe('docker.* configuration', () => {
  it('reads docker.host, docker.tls and docker.publishHost from the file, EMULATOR_DOCKER_* and flags', () => {
    const c = loadConfig({
      ignoreDefaultFile: true,
      env: {
        EMULATOR_DOCKER_HOST: 'tcp://127.0.0.1:2376',
        EMULATOR_DOCKER_CERT_PATH: certs,
        EMULATOR_DOCKER_PUBLISH_HOST: '127.0.0.2',
      },
    });
    expect(c.docker).toMatchObject({
      host: 'tcp://127.0.0.1:2376',
      tls: { certPath: certs },
      publishHost: '127.0.0.2',
    });
    expect(loadConfig({ ignoreDefaultFile: true, env: {} }).docker).toMatchObject({
      socketPath: '',
      publishHost: '127.0.0.1',
    });
    expect(
      loadConfig({
        ignoreDefaultFile: true,
        env: { EMULATOR_DOCKER_HOST: 'tcp://127.0.0.1:1' },
        overrides: { docker: { host: 'unix:///run/d.sock' } },
      }).docker.host,
    ).toBe('unix:///run/d.sock');
  });

  it('names the key of a bad value', () => {
    const problems = (input: object) => {
      try {
        loadConfig({ ignoreDefaultFile: true, env: {}, overrides: input });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ docker: { host: 'http://127.0.0.1:2375' } })).toEqual([
      expect.stringMatching(/docker\.host: expected unix:\/\/\/path\/to\/docker\.sock or tcp:\/\/host:port/),
    ]);
    expect(problems({ docker: { publishHost: 'engine.example.test' } })).toEqual([
      expect.stringMatching(/docker\.publishHost: expected an IP address/),
    ]);
    expect(problems({ docker: { tls: { ca: '/ca.pem' } } })).toEqual([
      expect.stringMatching(/docker\.tls: give certPath, or all of ca, cert and key/),
    ]);
  });

  it('docker.network: from EMULATOR_DOCKER_NETWORK; a user-defined network only, and not on a swarm', () => {
    const env = { EMULATOR_DOCKER_NETWORK: 'ci-net', EMULATOR_PUBLIC_HOST: 'emulator' };
    const c = loadConfig({ ignoreDefaultFile: true, env });
    expect(c.docker.network).toBe('ci-net');
    expect(c.publicHost).toBe('emulator');
    expect(loadConfig({ ignoreDefaultFile: true, env: {} }).docker.network).toBeUndefined();
    const refused = (docker: object) => {
      try {
        loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { docker } });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(refused({ network: 'host' })).toEqual([
      expect.stringMatching(/docker\.network: must be a user-defined Docker network/),
    ]);
    expect(refused({ network: 'ci-net', mode: 'swarm' })).toEqual([
      expect.stringMatching(/docker\.network: docker\.network is not supported with docker\.mode "swarm"/),
    ]);
  });
});

describe('typed engine errors', () => {
  const where = { label: 'tcp://127.0.0.1:2376 (TLS)', tls: true };
  const status = (statusCode: number, message: string) =>
    Object.assign(new Error(message), { statusCode, json: { message } });

  it('404 and 409 answers become NoSuchContainer, NoSuchImage and Conflict errors', () => {
    expect(translateDockerError(status(404, 'No such container: abc'), 'kill', ['abc'], where)).toBeInstanceOf(
      NoSuchContainerError,
    );
    expect(
      translateDockerError(status(404, 'No such image: x:1'), 'run', [{ image: 'x:1', name: 'n' }], where),
    ).toMatchObject({ name: 'NoSuchImageError', image: 'x:1' });
    expect(translateDockerError(status(404, 'No such image: x:1'), 'imageCommand', ['x:1'], where)).toBeInstanceOf(
      NoSuchImageError,
    );
    const conflict = translateDockerError(status(409, 'container abc is not running'), 'exec', ['abc'], where);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect((conflict as Error).message).toBe('container abc is not running');
    const other = status(500, 'engine trouble');
    expect(translateDockerError(other, 'run', [{}], where)).toBe(other);
  });

  it('a TLS alert from an engine refusing the client certificate is an unavailable engine, said plainly', () => {
    const alert = Object.assign(new Error('tlsv13 alert certificate required'), {
      code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    const typed = translateDockerError(alert, 'list', [{}], where);
    expect(typed).toBeInstanceOf(EngineUnavailableError);
    expect((typed as Error).message).toMatch(
      /^the Docker engine at tcp:\/\/127\.0\.0\.1:2376 \(TLS\) cannot be reached: the TLS handshake failed \(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED/,
    );
    // A hang-up is only a refused handshake on a TLS endpoint; on the local socket it stays an engine failure.
    const hangUp = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(translateDockerError(hangUp, 'list', [{}], where)).toBeInstanceOf(EngineUnavailableError);
    expect(translateDockerError(hangUp, 'list', [{}], { label: 'unix:///var/run/docker.sock', tls: false })).toBe(
      hangUp,
    );
  });
});
