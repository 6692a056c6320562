import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS, type RuntimeEvent } from '../../src/runtime/runtime.ts';
import { docker, dockerPs, eventually, removeByLabel } from '../support/docker-cli.ts';

// The Docker runtime against a real engine, observed with the docker CLI.
const instance = `rt-${randomBytes(4).toString('hex')}`;
const runtime = createDockerRuntime();
const labels = { [LABELS.instance]: instance, [LABELS.appName]: 'runtime-test' };

afterAll(async () => {
  await runtime.close();
  removeByLabel(`${LABELS.instance}=${instance}`);
});

describe('docker runtime (real engine)', () => {
  it("buildImage with network none: the RUN steps see no interface but loopback (without it, the bridge's too)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-rt-build-'));
    const tags = [`scalingo-emulator/rt-${instance}:none`, `scalingo-emulator/rt-${instance}:bridge`];
    try {
      // Two commands (the builder's layer cache would give the second build the first one's layer).
      const dockerfile = (step: string) =>
        `FROM ${DEFAULT_STACK_IMAGE}\nRUN echo ${step} ${instance}; ls /sys/class/net > /interfaces\n`;
      await runtime.buildImage({
        contextDir: dir,
        dockerfile: dockerfile('none'),
        tag: tags[0],
        labels,
        network: 'none',
      });
      await runtime.buildImage({ contextDir: dir, dockerfile: dockerfile('bridge'), tag: tags[1], labels });
      const interfaces = (tag: string) =>
        docker('run', '--rm', '--network', 'none', tag, 'cat', '/interfaces').split('\n').sort();
      expect(interfaces(tags[0])).toEqual(['lo']);
      expect(interfaces(tags[1]).length).toBeGreaterThan(1);
    } finally {
      for (const t of tags) await runtime.removeImage(t);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('smoke: a container from the offline image answers HTTP on 127.0.0.1 and is removed', async () => {
    const info = await runtime.run({
      name: `emu-${instance}-web-1`,
      image: DEFAULT_STACK_IMAGE,
      cmd: [
        'sh',
        '-c',
        'mkdir -p /www && echo "hello from $CONTAINER" > /www/index.html && exec httpd -f -p $PORT -h /www',
      ],
      env: { PORT: '8080', CONTAINER: 'web-1' },
      labels,
      memoryBytes: 256 * 1024 * 1024,
      publishPort: 8080,
    });
    expect(info.state).toBe('running');
    expect(info.hostPort).toBeGreaterThan(0);
    // Docker itself says: running, memory limit set, port published on loopback only.
    expect(dockerPs([`${LABELS.instance}=${instance}`]).map((c) => c.id)).toContain(info.engineId);
    expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', info.engineId)).toBe(String(256 * 1024 * 1024));
    expect(docker('port', info.engineId, '8080')).toBe(`127.0.0.1:${info.hostPort}`);
    const body = await eventually(async () => (await fetch(`http://127.0.0.1:${info.hostPort}/`)).text(), {
      what: 'httpd',
    });
    expect(body).toBe('hello from web-1\n');
    await runtime.remove(info.engineId);
    expect(dockerPs([`${LABELS.instance}=${instance}`], true).map((c) => c.id)).not.toContain(info.engineId);
  });

  it('docker.network naming a network the engine lacks: a line naming the setting, no container left', async () => {
    const missing = `scalingo-emu-${instance}-no-such-net`;
    const onMissing = createDockerRuntime({ network: missing });
    try {
      const name = `emu-${instance}-web-2`;
      await expect(
        onMissing.run({
          name,
          image: DEFAULT_STACK_IMAGE,
          cmd: ['sleep', '600'],
          env: {},
          labels,
          memoryBytes: 64 * 1024 * 1024,
          publishPort: 8080,
        }),
      ).rejects.toThrow(`docker.network "${missing}" does not exist on the engine`);
      expect(dockerPs([`${LABELS.instance}=${instance}`], true).map((c) => c.name)).not.toContain(name);
    } finally {
      await onMissing.close();
    }
  });

  it('streams logs with timestamps (history and follow), reports exits as events', async () => {
    const events: RuntimeEvent[] = [];
    const off = runtime.onEvent((e) => e.labels[LABELS.instance] === instance && events.push(e));
    const info = await runtime.run({
      name: `emu-${instance}-worker-1`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', 'for i in 1 2 3; do echo out-$i; echo err-$i >&2; done; sleep 1; echo late; exit 3'],
      env: {},
      labels,
      memoryBytes: 64 * 1024 * 1024,
    });
    const stream = await runtime.logs(info.engineId, { follow: true });
    const lines: string[] = [];
    for await (const l of stream) lines.push(`${l.stream}:${l.text}`);
    expect(lines.filter((l) => l.startsWith('stdout:'))).toEqual([
      'stdout:out-1',
      'stdout:out-2',
      'stdout:out-3',
      'stdout:late',
    ]);
    expect(lines.filter((l) => l.startsWith('stderr:'))).toEqual(['stderr:err-1', 'stderr:err-2', 'stderr:err-3']);
    expect(await runtime.wait(info.engineId)).toBe(3);
    await eventually(() => events.find((e) => e.engineId === info.engineId && e.action === 'die'), {
      what: 'die event',
    });
    expect(events.find((e) => e.action === 'die')!.exitCode).toBe(3);
    // History only, from a point in time.
    const all: { time: number; text: string }[] = [];
    for await (const l of await runtime.logs(info.engineId, { follow: false })) all.push(l);
    const since = all.find((l) => l.text === 'late')!.time;
    const later: string[] = [];
    for await (const l of await runtime.logs(info.engineId, { follow: false, sinceMs: since })) later.push(l.text);
    expect(later).toContain('late');
    expect(later).not.toContain('out-1');
    off();
    const inspected = await runtime.inspect(info.engineId);
    expect(inspected).toMatchObject({ state: 'exited', exitCode: 3 });
    await runtime.remove(info.engineId);
  });

  it('samples stats, delivers signals, stops gracefully', async () => {
    const info = await runtime.run({
      name: `emu-${instance}-burn-1`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', 'trap "echo got-usr1" USR1; yes > /dev/null & while true; do sleep 0.2; done'],
      env: {},
      labels,
      memoryBytes: 128 * 1024 * 1024,
    });
    // `yes` burns a core; on a loaded machine one sample may catch it descheduled, so poll.
    const sample = await eventually(
      async () => {
        const s = await runtime.stats(info.engineId);
        return s && s.cpu > 0.2 ? s : null;
      },
      { what: 'a busy CPU sample', timeoutMs: 30_000 },
    );
    expect(sample.memoryLimit).toBe(128 * 1024 * 1024);
    await runtime.kill(info.engineId, 'SIGUSR1');
    await eventually(() => docker('logs', info.engineId).includes('got-usr1'), { what: 'USR1 trap output' });
    await runtime.stop(info.engineId, 1);
    expect((await runtime.inspect(info.engineId))!.state).toBe('exited');
    await runtime.remove(info.engineId);
  });

  it('answers null / no-ops for unknown containers and missing images', async () => {
    expect(await runtime.inspect('0'.repeat(64))).toBeNull();
    expect(await runtime.stats('0'.repeat(64))).toBeNull();
    await runtime.remove('0'.repeat(64));
    expect(await runtime.imageExists('scalingo-emulator/none:0')).toBe(false);
    const status = await runtime.probe();
    expect(status.ok).toBe(true);
  });
});
