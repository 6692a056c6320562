import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ensureBaseImageWithProgress, followDeployments } from '../../src/cli/follow.ts';
import { createProgress } from '../../src/cli/progress.ts';
import { type Emulator } from '../../src/emulator.ts';

// Progress of long work: redrawn lines on a terminal, structured log lines anywhere else.
function sink(isTTY: boolean) {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY, columns: 80 },
  );
  return { stream, text: () => text };
}

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return { logger, lines };
}

describe('progress', () => {
  it('on a terminal: a spinner line per task, redrawn in place, then a ✔ or ✖ line', () => {
    const out = sink(true);
    const { logger, lines } = logSink();
    const p = createProgress({ stream: out.stream, logger });
    expect(p.tty).toBe(true);
    const a = p.start('Deploying my-app');
    const b = p.start('Building the base image');
    a.update('-----> Building on stack scalingo-22');
    b.fail('no busybox');
    a.done('deployed');
    expect(out.text()).toMatch(/⠋ Deploying my-app \(\d+\.\d s\)\n/);
    expect(out.text()).toContain('\x1b[2F\x1b[J'); // two live lines rewritten
    expect(out.text()).toMatch(/✖ Building the base image — no busybox \(\d+\.\d s\)\n/);
    expect(out.text()).toMatch(/✔ Deploying my-app — deployed \(\d+\.\d s\)\n$/);
    expect(lines).toEqual([]);
  });

  it('elsewhere: no escape codes, structured lines with the task and its duration', () => {
    const out = sink(false);
    const { logger, lines } = logSink();
    const p = createProgress({ stream: out.stream, logger });
    const t = p.start('Deploying my-app', { app: 'my-app' });
    t.update('building');
    t.done('deployed');
    p.note('not shown');
    expect(out.text()).toBe('');
    expect(lines.map((l) => l.msg)).toEqual(['Deploying my-app: started', 'Deploying my-app: done']);
    expect(lines[1]).toMatchObject({ app: 'my-app', task: 'Deploying my-app', detail: 'deployed', level: 30 });
    expect(typeof lines[1].ms).toBe('number');
  });

  it('clips lines to the terminal width', () => {
    const out = sink(true);
    out.stream.columns = 30;
    const p = createProgress({ stream: out.stream, logger: logSink().logger });
    p.start('a very long task label that does not fit').done();
    expect(
      out
        .text()
        .split('\n')
        .every((l) => l.replace(/\x1b\[\d*[FJ]/g, '').length <= 29),
    ).toBe(true);
  });
});

describe('what the commands follow', () => {
  const fakeEmulator = (opts: { hasImage: boolean; engineOk?: boolean }) => {
    const built: string[] = [];
    const bus = new EventEmitter();
    const emu = {
      runtime: {
        probe: async () => ({ ok: opts.engineOk ?? true }),
        imageExists: async () => opts.hasImage,
        ensureBaseImage: async (tag: string) => void built.push(tag),
      },
      area: (name: string) =>
        name === 'containers' ? { deployments: { bus } } : { apps: { find: () => ({ name: 'my-app' }) } },
      urls: { api: 'http://127.0.0.1:1', routerPort: 2 },
    } as unknown as Emulator;
    return { emu, built, bus };
  };

  it('builds the base image with progress on the first start only', async () => {
    const { logger, lines } = logSink();
    const first = fakeEmulator({ hasImage: false });
    await ensureBaseImageWithProgress(first.emu, createProgress({ stream: sink(false).stream, logger }));
    expect(first.built).toEqual(['scalingo-emulator/stack-busybox:1']);
    expect(lines.map((l) => l.msg)).toEqual([
      'Building the base image scalingo-emulator/stack-busybox:1 (first start only): started',
      'Building the base image scalingo-emulator/stack-busybox:1 (first start only): done',
    ]);
    const again = fakeEmulator({ hasImage: true });
    await ensureBaseImageWithProgress(again.emu, createProgress({ stream: sink(false).stream, logger }));
    expect(again.built).toEqual([]);
    const noEngine = fakeEmulator({ hasImage: false, engineOk: false });
    await ensureBaseImageWithProgress(noEngine.emu, createProgress({ stream: sink(false).stream, logger }));
    expect(noEngine.built).toEqual([]);
  });

  it('follows a deployment from new to its end, and stops following when asked', () => {
    const out = sink(true);
    out.stream.columns = 200;
    const { emu, bus } = fakeEmulator({ hasImage: true });
    const stop = followDeployments(emu, createProgress({ stream: out.stream, logger: logSink().logger }));
    bus.emit('event', { appId: 'a', deploymentId: 'd1', type: 'new', data: {} });
    bus.emit('event', {
      appId: 'a',
      deploymentId: 'd1',
      type: 'log',
      data: { content: '-----> Building on stack scalingo-22\n' },
    });
    bus.emit('event', { appId: 'a', deploymentId: 'd1', type: 'status', data: { status: 'build-error' } });
    expect(out.text()).toMatch(
      /✖ Deploying my-app — build-error \(GET http:\/\/127\.0\.0\.1:1\/v1\/apps\/my-app\/deployments\/d1\/output\)/,
    );
    stop();
    const before = out.text();
    bus.emit('event', { appId: 'a', deploymentId: 'd2', type: 'new', data: {} });
    expect(out.text()).toBe(before);
    expect(bus.listenerCount('event')).toBe(0);
  });
});
