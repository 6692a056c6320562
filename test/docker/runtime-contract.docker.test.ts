// The Docker runtime against the runtime contract, on the real engine (the fake passes the same suite).
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { runtimeContract } from '../contract/runtime-contract.ts';
import { removeByLabel } from '../support/docker-cli.ts';

runtimeContract('Docker (dockerode, local socket)', () => {
  const runtime = createDockerRuntime();
  return {
    runtime,
    async cleanup(labels) {
      await runtime.close();
      removeByLabel(`${LABELS.instance}=${labels[LABELS.instance]}`);
    },
  };
});
