import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNpm } from '../../src/modules/deployments/host-npm.ts';
import { withShutdownGate } from '../../src/runtime/shutdown-gate.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// A stop ends the host's package downloads under way (issue 35): the shutdown gate's signal, aborted at
// close(), ends the host's npm that a build's prefetch started, however long its registry keeps it waiting.
describe('a stop ends the host npm runs of the builds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'host-npm-stop-'));
  const sockets = new Set<Socket>();
  // A registry that accepts connections and never answers.
  const silent = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((ok) => silent.close(ok));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the gate aborts its signal at close()', async () => {
    const gate = withShutdownGate(new FakeRuntime());
    expect(gate.signal.aborted).toBe(false);
    await gate.close();
    expect(gate.signal.aborted).toBe(true);
  });

  it('an npm waiting on its registry ends when the signal is aborted', async () => {
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    const address = silent.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'x', version: '1.0.0', dependencies: { ms: '2.1.3' } }),
    );
    const gate = withShutdownGate(new FakeRuntime());
    const asked = new Promise<void>((ok) => silent.once('connection', () => ok()));
    const run = runNpm(['install', '--no-audit', '--no-fund', `--registry=http://127.0.0.1:${address.port}/`], {
      cwd: dir,
      signal: gate.signal,
      env: { npm_config_cache: join(dir, 'cache'), npm_config_fetch_retries: '0' },
    });
    await asked; // npm is now waiting on the registry
    await gate.close();
    expect((await run).code).toBe(-1);
  });
});
