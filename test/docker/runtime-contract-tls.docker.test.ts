// The Docker runtime over TCP with TLS (docker.host + docker.tls) against the runtime contract: the
// same engine, reached through a TLS endpoint that demands a client certificate (test/support/tls-engine.ts).
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { resolveEngineEndpoint } from '../../src/runtime/engine-endpoint.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { runtimeContract } from '../contract/runtime-contract.ts';
import { removeByLabel } from '../support/docker-cli.ts';
import { startTlsEngine } from '../support/tls-engine.ts';

runtimeContract('Docker (dockerode, tcp:// with TLS)', async () => {
  const local = resolveEngineEndpoint({}, process.env);
  if (local.kind !== 'socket')
    throw new Error(`a TLS endpoint is put in front of the local socket; DOCKER_HOST is ${local.label}`);
  const engine = await startTlsEngine(local.socketPath);
  const runtime = createDockerRuntime({ host: engine.host, tls: { certPath: engine.goodCerts }, env: {} });
  return {
    runtime,
    async cleanup(labels) {
      await runtime.close();
      removeByLabel(`${LABELS.instance}=${labels[LABELS.instance]}`);
      // Every call of the suite went through the endpoint with the emulator's certificate.
      if (!engine.accepted.length || engine.accepted.some((cn) => cn !== 'emulator-client'))
        throw new Error(`unexpected TLS clients: ${engine.accepted.join(', ')}`);
      await engine.close();
    },
  };
});
