// The in-memory fake of the fast tests against the runtime contract (the Docker runtime passes the same suite).

import { runtimeContract } from '../contract/runtime-contract.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

runtimeContract('in-memory fake (test/support/fake-runtime.ts)', () => {
  const runtime = new FakeRuntime();
  return { runtime, cleanup: () => runtime.close() };
});
