import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { removeByLabel } from '../support/docker-cli.ts';

// The runtime's exec with a stream on the command's stdin (a restore's archive, issue 22), against a real engine.
const instance = `rt-stdin-${randomBytes(4).toString('hex')}`;
const runtime = createDockerRuntime();
const MiB = 1024 * 1024;

/** `count` chunks of 1 MiB of random bytes, and the SHA-256 of them all. */
function randomStream(count: number): { stream: Readable; sha256: Promise<string> } {
  const hash = createHash('sha256');
  let left = count;
  let done: (hex: string) => void = () => undefined;
  const sha256 = new Promise<string>((resolve) => (done = resolve));
  const stream = new Readable({
    read() {
      if (left-- === 0) {
        done(hash.digest('hex'));
        this.push(null);
        return;
      }
      const chunk = randomBytes(MiB);
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256 };
}

describe('runtime exec with stdin (real engine)', () => {
  let engineId = '';

  beforeAll(async () => {
    const info = await runtime.run({
      name: `emu-${instance}-sink`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', 'exec sleep 600'],
      env: {},
      labels: { [LABELS.instance]: instance, [LABELS.appName]: 'runtime-stdin-test' },
      memoryBytes: 128 * MiB,
    });
    engineId = info.engineId;
  });

  afterAll(async () => {
    await runtime.close();
    removeByLabel(`${LABELS.instance}=${instance}`);
  });

  it('every byte of the stream reaches the command, whose stdin closes at the end of it', async () => {
    const { stream, sha256 } = randomStream(24);
    const out = await runtime.exec(engineId, ['sh', '-c', 'sha256sum | cut -d" " -f1; echo done >&2'], {
      stdin: stream,
    });
    expect(out.exitCode).toBe(0);
    expect(out.stdout.trim()).toBe(await sha256);
    expect(out.stderr.trim()).toBe('done');
  });

  it('a command that exits without reading its stdin ends the exec with its code; the rest of the stream is dropped', async () => {
    const { stream } = randomStream(256);
    const out = await runtime.exec(engineId, ['sh', '-c', 'head -c 10 >/dev/null; echo "refused" >&2; exit 4'], {
      stdin: stream,
    });
    expect(out.exitCode).toBe(4);
    expect(out.stderr.trim()).toBe('refused');
    expect(stream.destroyed).toBe(true);
  });

  it('a stream that fails ends the exec: the command sees its stdin end early', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('disk read failed'));
      },
    });
    const out = await runtime.exec(engineId, ['sh', '-c', 'n=$(wc -c); echo "got $n bytes"; exit 3'], {
      stdin: failing,
    });
    expect(out.exitCode).not.toBe(0);
  });
});
