// An in-memory ContainerRuntime for the logs area's fast tests: containers are records that
// "print" lines on demand, with Docker-like ns timestamps, follow streams and start/die events.
// Only what the logs collector (and the emulator's start/stop) use is real; the rest is inert.
import { randomBytes } from 'node:crypto';
import type { ContainerInfo, ContainerRuntime, EngineState, LogLine, RuntimeEvent, StatsSample } from '../../src/runtime/runtime.ts';
import { EngineUnavailableError, LABELS } from '../../src/runtime/runtime.ts';

interface FakeContainer {
  info: ContainerInfo;
  lines: LogLine[];
  followers: Set<Follow>;
}

class Follow implements AsyncIterable<LogLine> {
  private items: LogLine[] = [];
  private waiter: ((r: IteratorResult<LogLine>) => void) | null = null;
  ended = false;
  constructor(private readonly onClose: () => void) {}
  push(l: LogLine) {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: l, done: false });
    } else this.items.push(l);
  }
  end() {
    this.ended = true;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: undefined as never, done: true });
    }
  }
  close() {
    this.end();
    this.onClose();
  }
  [Symbol.asyncIterator](): AsyncIterator<LogLine> {
    return {
      next: () => {
        if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.ended) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((r) => (this.waiter = r));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}

export class FakeLogsRuntime implements ContainerRuntime {
  readonly containers = new Map<string, FakeContainer>();
  readonly removed: string[] = [];
  private listeners = new Set<(e: RuntimeEvent) => void>();
  private lastNs = 0n;

  /** Docker-like RFC 3339 timestamp with ns, strictly increasing; trailing zeros trimmed like Docker. */
  private stamp(): { time: number; timestamp: string } {
    let ns = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1000));
    if (ns <= this.lastNs) ns = this.lastNs + 1n;
    this.lastNs = ns;
    const ms = Number(ns / 1_000_000n);
    const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
    return { time: ms, timestamp: `${new Date(ms).toISOString().slice(0, 19)}${frac ? `.${frac}` : ''}Z` };
  }

  private emit(c: FakeContainer, action: RuntimeEvent['action']) {
    const e: RuntimeEvent = { engineId: c.info.engineId, action, exitCode: action === 'die' ? 0 : null, labels: c.info.labels, time: Date.now() };
    for (const l of [...this.listeners]) l(e);
  }

  /** A container of an app: name `<type>-<index>`. Started (event) unless running is false. */
  add(opts: { instanceId: string; appId: string; appName?: string; type: string; index: number; running?: boolean }): string {
    const engineId = randomBytes(32).toString('hex');
    const labels = {
      [LABELS.managed]: '1',
      [LABELS.instance]: opts.instanceId,
      [LABELS.appId]: opts.appId,
      [LABELS.appName]: opts.appName ?? 'app',
      [LABELS.type]: opts.type,
      [LABELS.index]: String(opts.index),
    };
    const running = opts.running ?? true;
    const info: ContainerInfo = { engineId, name: `fake-${engineId.slice(0, 8)}`, labels, state: running ? 'running' : 'created', exitCode: null, hostPort: null, startedAt: null, finishedAt: null, memoryLimit: 0, oomKilled: false };
    const c = { info, lines: [], followers: new Set<Follow>() };
    this.containers.set(engineId, c);
    if (running) this.emit(c, 'start');
    return engineId;
  }

  print(engineId: string, text: string, stream: 'stdout' | 'stderr' = 'stdout'): LogLine {
    const c = this.containers.get(engineId)!;
    const l: LogLine = { ...this.stamp(), stream, text };
    c.lines.push(l);
    for (const f of c.followers) f.push(l);
    return l;
  }

  /** The container exits: follow streams end, `die` is emitted. */
  exit(engineId: string): void {
    const c = this.containers.get(engineId)!;
    c.info.state = 'exited';
    for (const f of c.followers) f.end();
    c.followers.clear();
    this.emit(c, 'die');
  }

  restart(engineId: string): void {
    this.exit(engineId);
    const c = this.containers.get(engineId)!;
    c.info.state = 'running';
    this.emit(c, 'start');
  }

  destroy(engineId: string): void {
    const c = this.containers.get(engineId)!;
    this.exit(engineId);
    this.containers.delete(engineId);
    this.emit(c, 'destroy');
  }

  followerCount(engineId: string): number {
    return this.containers.get(engineId)?.followers.size ?? 0;
  }

  async probe() {
    return { ok: true as const, version: 'fake', apiVersion: 'fake' };
  }
  private engineListeners = new Set<(s: EngineState) => void>();
  private down = false;
  private check(): void {
    if (this.down) throw new EngineUnavailableError(Object.assign(new Error('connect ENOENT'), { code: 'ENOENT', syscall: 'connect' }));
  }
  /** An engine outage: every stream is cut, calls fail as unreachable; `engine('up')` ends it. */
  engine(state: EngineState): void {
    this.down = state === 'down';
    if (this.down) for (const c of this.containers.values()) this.cut(c.info.engineId);
    for (const l of [...this.engineListeners]) l(state);
  }
  /** Follow streams of a running container end (a cut connection); the container goes on. */
  cut(engineId: string): void {
    const c = this.containers.get(engineId)!;
    for (const f of c.followers) f.end();
    c.followers.clear();
  }
  async available() {
    return !this.down;
  }
  onEngine(listener: (s: EngineState) => void) {
    this.engineListeners.add(listener);
    return () => void this.engineListeners.delete(listener);
  }
  async list(labels: Record<string, string>) {
    this.check();
    return [...this.containers.values()].filter((c) => Object.entries(labels).every(([k, v]) => c.info.labels[k] === v)).map((c) => ({ ...c.info }));
  }
  onEvent(listener: (e: RuntimeEvent) => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  async logs(engineId: string, opts: { follow: boolean; sinceMs?: number }) {
    this.check();
    const c = this.containers.get(engineId);
    if (!c) throw Object.assign(new Error('no such container'), { statusCode: 404 });
    const f: Follow = new Follow(() => c.followers.delete(f));
    for (const l of c.lines) if (opts.sinceMs === undefined || l.time >= opts.sinceMs) f.push(l);
    if (opts.follow && c.info.state === 'running') c.followers.add(f);
    else f.end();
    return f;
  }
  async inspect(engineId: string) {
    this.check();
    const c = this.containers.get(engineId);
    return c ? { ...c.info } : null;
  }
  /** Reconciliation may "remove" containers it does not know: the fake only records it. */
  async remove(engineId: string) {
    this.removed.push(engineId);
  }
  async stats(_engineId?: string): Promise<StatsSample | null> {
    return null;
  }
  async close() {}
  private inert(): never {
    throw new Error('not available in the fake logs runtime');
  }
  async ensureBaseImage() {}
  async buildImage(): Promise<void> {
    this.inert();
  }
  async imageExists() {
    return false;
  }
  async removeImage() {}
  async imageCommand() {
    return '';
  }
  async run(): Promise<ContainerInfo> {
    this.inert();
  }
  async start(): Promise<ContainerInfo> {
    this.inert();
  }
  async stop() {}
  async kill() {}
  async wait() {
    return 0;
  }
  async attach(): Promise<never> {
    this.inert();
  }
  async resize() {}
  async putArchive() {}
}
