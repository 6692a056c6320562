// What every ContainerRuntime must do, as one suite run against each implementation: the Docker
// runtime (test/docker/runtime-contract.docker.test.ts) and the in-memory fake the fast tests use
// (test/unit/runtime-contract.fake.test.ts), so the fake cannot drift from the engine. A new runtime
// (CONTRIBUTING.md "Adding a runtime") gets a test file calling runtimeContract with its factory.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import {
  ConflictError,
  type ContainerRuntime,
  type ContainerSpec,
  LABELS,
  type LogLine,
  NoSuchContainerError,
  NoSuchImageError,
  type RuntimeEvent,
} from '../../src/runtime/runtime.ts';

export interface ContractSubject {
  runtime: ContainerRuntime;
  /** Removes whatever the suite left behind (labelled with `labels`), then closes the runtime. */
  cleanup(labels: Record<string, string>): Promise<void> | void;
}

const MiB = 1024 * 1024;

async function until<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function collect(stream: AsyncIterable<LogLine>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of stream) out.push(`${l.stream}:${l.text}`);
  return out;
}

export function runtimeContract(name: string, make: () => Promise<ContractSubject> | ContractSubject): void {
  describe(`ContainerRuntime contract: ${name}`, () => {
    const instance = `contract-${randomBytes(4).toString('hex')}`;
    const labels = { [LABELS.instance]: instance, [LABELS.appName]: 'contract' };
    let subject: ContractSubject;
    let rt: ContainerRuntime;
    let n = 0;
    const spec = (cmd: string, extra: Partial<ContainerSpec> = {}): ContainerSpec => ({
      name: `scalingo-emu-${instance}-${++n}`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', cmd],
      env: { GREETING: 'hello' },
      labels,
      memoryBytes: 64 * MiB,
      ...extra,
    });
    const missing = 'f'.repeat(64);

    beforeAll(async () => {
      subject = await make();
      rt = subject.runtime;
      expect((await rt.probe()).ok).toBe(true);
    });
    afterAll(async () => {
      await subject?.cleanup(labels);
    });

    it('create without start, start, inspect, list by labels, stop, remove (events along the way)', async () => {
      const events: RuntimeEvent[] = [];
      const off = rt.onEvent((e) => e.labels[LABELS.instance] === instance && events.push(e));
      const created = await rt.run(spec('sleep 600', { labels: { ...labels, [LABELS.type]: 'worker' } }), {
        start: false,
      });
      expect(created.state).toBe('created');
      expect(created.labels[LABELS.managed]).toBe('1');
      expect(created.memoryLimit).toBe(64 * MiB);
      const started = await rt.start(created.engineId);
      expect(started).toMatchObject({ engineId: created.engineId, state: 'running', exitCode: null });
      expect((await rt.inspect(created.engineId))?.state).toBe('running');
      // start of a running container is harmless
      expect((await rt.start(created.engineId)).state).toBe('running');
      const listed = await rt.list({ [LABELS.instance]: instance, [LABELS.type]: 'worker' });
      expect(listed.map((c) => c.engineId)).toEqual([created.engineId]);
      expect(await rt.list({ [LABELS.instance]: instance, [LABELS.type]: 'nothing-has-this' })).toEqual([]);
      // states: the same containers with the engine's state now, from the list alone (what ps answers).
      const workers = { [LABELS.instance]: instance, [LABELS.type]: 'worker' };
      expect(await rt.states(workers)).toEqual([{ engineId: created.engineId, state: 'running' }]);
      expect(await rt.states({ [LABELS.instance]: instance, [LABELS.type]: 'nothing-has-this' })).toEqual([]);
      await rt.stop(created.engineId, 1);
      const stopped = await rt.inspect(created.engineId);
      expect(stopped?.state).toBe('exited');
      expect(stopped?.exitCode).not.toBeNull();
      expect(await rt.states(workers)).toEqual([{ engineId: created.engineId, state: 'exited' }]);
      await rt.remove(created.engineId);
      expect(await rt.inspect(created.engineId)).toBeNull();
      expect(await rt.states(workers)).toEqual([]);
      await until(
        () =>
          ['start', 'die', 'destroy'].every((a) =>
            events.some((e) => e.engineId === created.engineId && e.action === a),
          ),
        'start, die and destroy events',
      );
      off();
    });

    it('a script exits with its code: wait resolves it, logs hold stdout and stderr, die carries the code', async () => {
      const events: RuntimeEvent[] = [];
      const off = rt.onEvent((e) => e.labels[LABELS.instance] === instance && events.push(e));
      const c = await rt.run(spec('echo out-$GREETING; echo err-1 >&2; exit 3'));
      expect(await rt.wait(c.engineId)).toBe(3);
      const info = await rt.inspect(c.engineId);
      expect(info).toMatchObject({ state: 'exited', exitCode: 3, hostPort: null });
      const lines = await collect(await rt.logs(c.engineId, { follow: false }));
      expect(lines.sort()).toEqual(['stderr:err-1', 'stdout:out-hello']);
      const die = await until(() => events.find((e) => e.engineId === c.engineId && e.action === 'die'), 'die event');
      expect(die.exitCode).toBe(3);
      off();
      await rt.remove(c.engineId);
    });

    it('follows logs live until the container exits; timestamps are RFC 3339 and ordered; sinceMs filters', async () => {
      const c = await rt.run(spec('echo one; sleep 1; echo two; sleep 1; echo three'));
      const lines: LogLine[] = [];
      for await (const l of await rt.logs(c.engineId, { follow: true })) lines.push(l);
      expect(lines.map((l) => l.text)).toEqual(['one', 'two', 'three']);
      for (const l of lines) expect(Date.parse(l.timestamp)).toBe(l.time);
      expect(lines[1].time).toBeGreaterThan(lines[0].time);
      const later = await collect(await rt.logs(c.engineId, { follow: false, sinceMs: lines[1].time }));
      expect(later).toEqual(['stdout:two', 'stdout:three']);
      await rt.remove(c.engineId);
    });

    it('exec runs in a running container (output, exit code, env); refused with ConflictError once it stopped', async () => {
      const c = await rt.run(spec('sleep 600'));
      expect(await rt.exec(c.engineId, ['sh', '-c', 'echo from-exec; echo to-err >&2; exit 4'])).toEqual({
        exitCode: 4,
        stdout: 'from-exec\n',
        stderr: 'to-err\n',
      });
      expect((await rt.exec(c.engineId, ['sh', '-c', 'echo $EXTRA'], { env: { EXTRA: 'given' } })).stdout).toBe(
        'given\n',
      );
      const streamed = await rt.execStream(c.engineId, ['sh', '-c', 'echo streamed']);
      let text = '';
      for await (const chunk of streamed.stdout) text += String(chunk);
      expect(text).toBe('streamed\n');
      expect(await streamed.exitCode).toBe(0);
      await rt.stop(c.engineId, 0);
      await expect(rt.exec(c.engineId, ['sh', '-c', 'echo no'])).rejects.toBeInstanceOf(ConflictError);
      await expect(rt.kill(c.engineId, 'SIGKILL')).rejects.toBeInstanceOf(ConflictError);
      await rt.remove(c.engineId);
    });

    it('stats of a running container carry its memory limit; updateMemory changes it in place', async () => {
      const c = await rt.run(spec('sleep 600', { memoryBytes: 96 * MiB }));
      const s = await until(() => rt.stats(c.engineId), 'a stats sample');
      expect(s.memoryLimit).toBe(96 * MiB);
      expect(s.memoryUsage).toBeGreaterThanOrEqual(0);
      await rt.updateMemory(c.engineId, 128 * MiB);
      expect((await rt.inspect(c.engineId))?.memoryLimit).toBe(128 * MiB);
      await rt.remove(c.engineId);
      expect(await rt.stats(c.engineId)).toBeNull();
    });

    it('readiness: a web container is ready once it answers on its published port, not before, never without one', async () => {
      const web = await rt.run(
        spec('mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p $PORT -h /www', {
          env: { PORT: '5000' },
          publishPort: 5000,
        }),
      );
      expect(web.hostPort).toBeGreaterThan(0);
      // Its address: the published port on publishHost (the default reach), as addressOf gives it from the port alone.
      expect(web.address).toEqual({ host: rt.publishHost, port: web.hostPort });
      expect(rt.addressOf({ engineId: web.engineId, port: web.hostPort ?? 0 })).toEqual(web.address);
      await until(() => rt.ready({ engineId: web.engineId, address: web.address }), 'readiness of the web container');
      const silent = await rt.run(spec('sleep 600', { env: { PORT: '5000' }, publishPort: 5000 }));
      expect(silent.hostPort).toBeGreaterThan(0);
      expect(await rt.ready({ engineId: silent.engineId, address: silent.address })).toBe(false);
      const worker = await rt.run(spec('sleep 600'));
      expect(worker.hostPort).toBeNull();
      expect(worker.address).toBeNull();
      expect(await rt.ready({ engineId: worker.engineId, address: worker.address })).toBe(false);
      await Promise.all([web, silent, worker].map((c) => rt.remove(c.engineId)));
    });

    it('a named volume is made with the ownership labels of its first container; networks keep their labels', async () => {
      const volume = `scalingo-emu-${instance}-contract-volume`;
      const network = `scalingo-emu-${instance}-contract-net`;
      expect(await rt.volumeLabels(volume)).toBeNull();
      expect(await rt.networkLabels(network)).toBeNull();
      const owner = { ...labels, [LABELS.addonId]: 'ad-contract', [LABELS.type]: 'addon' };
      const c = await rt.run(spec('echo data > /data/file', { labels: owner, binds: [`${volume}:/data`] }));
      expect(await rt.wait(c.engineId)).toBe(0);
      expect(await rt.volumeLabels(volume)).toEqual({
        [LABELS.managed]: '1',
        [LABELS.instance]: instance,
        [LABELS.addonId]: 'ad-contract',
      });
      await rt.remove(c.engineId);
      await rt.removeVolume(volume);
      expect(await rt.volumeLabels(volume)).toBeNull();
      await rt.ensureNetwork(network, { [LABELS.owner]: instance });
      expect(await rt.networkLabels(network)).toMatchObject({ [LABELS.managed]: '1', [LABELS.owner]: instance });
      await rt.removeNetwork(network);
      expect(await rt.networkLabels(network)).toBeNull();
    });

    it('typed errors: missing containers and images, names in use', async () => {
      await expect(rt.start(missing)).rejects.toBeInstanceOf(NoSuchContainerError);
      await expect(rt.kill(missing, 'SIGTERM')).rejects.toBeInstanceOf(NoSuchContainerError);
      await expect(rt.wait(missing)).rejects.toBeInstanceOf(NoSuchContainerError);
      await expect(rt.logs(missing, { follow: false })).rejects.toBeInstanceOf(NoSuchContainerError);
      await expect(rt.exec(missing, ['true'])).rejects.toBeInstanceOf(NoSuchContainerError);
      await expect(rt.updateMemory(missing, 64 * MiB)).rejects.toBeInstanceOf(NoSuchContainerError);
      const err = await rt.start(missing).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'NO_SUCH_CONTAINER', engineId: missing });
      // Tolerant calls: nothing to do is not an error.
      expect(await rt.inspect(missing)).toBeNull();
      expect(await rt.stats(missing)).toBeNull();
      await rt.stop(missing, 0);
      await rt.remove(missing);
      const absent = `scalingo-emulator/contract-absent-${instance}:1`;
      await expect(rt.run(spec('true', { image: absent }))).rejects.toBeInstanceOf(NoSuchImageError);
      await expect(rt.imageCommand(absent)).rejects.toBeInstanceOf(NoSuchImageError);
      expect(await rt.imageExists(absent)).toBe(false);
      expect(await rt.imageLabels(absent)).toBeNull();
      await rt.removeImage(absent);
      expect(await rt.imageExists(DEFAULT_STACK_IMAGE)).toBe(true);
      const first = await rt.run(spec('sleep 600'));
      await expect(rt.run({ ...spec('sleep 600'), name: first.name })).rejects.toBeInstanceOf(ConflictError);
      await rt.remove(first.engineId);
    });
  });
}
