// An in-memory ContainerRuntime for fast tests. It passes the same contract suite as the Docker
// runtime (test/contract/runtime-contract.ts), so what the areas see from it is what they see from
// Docker: typed errors, events, log streams, readiness. Commands are scripted, not run: a
// `sh -c` script is read as `;`/`&&`-separated statements of which `echo …` (`>&2` for stderr),
// `exit N`, `sleep N` and `httpd …` (listens: ready) mean something; anything else succeeds silently.
import { randomBytes } from 'node:crypto';
import { type Duplex, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { namedVolumes, volumeLabelsFor } from '../../src/runtime/ownership.ts';
import {
  type Address,
  ConflictError,
  type ContainerInfo,
  type ContainerRuntime,
  type ContainerSpec,
  type EngineState,
  EngineUnavailableError,
  LABELS,
  type LayerImageSpec,
  type LogLine,
  NoSuchContainerError,
  NoSuchImageError,
  type RuntimeEvent,
  type StatsSample,
} from '../../src/runtime/runtime.ts';
import { Follow } from './fake-follow.ts';

export interface FakeContainer {
  info: ContainerInfo;
  spec?: ContainerSpec;
  lines: LogLine[];
  followers: Set<Follow>;
  /** Placed by a test (FakeLogsRuntime.add): lives until the test ends it; a remove() is only recorded. */
  pinned?: boolean;
  listening?: boolean;
  /** Bumped at every start/stop: a script of an earlier run stops acting. */
  generation: number;
  exited?: Promise<number>;
  onExit?: (code: number) => void;
}

const SCRIPT_SLEEP_CAP_MS = 2000;

export class FakeRuntime implements ContainerRuntime {
  readonly publishHost = '127.0.0.1';
  /** Its ports are "published" on publishHost, as the Docker runtime's default (reach.ts). */
  addressOf(c: { engineId: string; port: number }): Address {
    return { host: this.publishHost, port: c.port };
  }
  readonly containers = new Map<string, FakeContainer>();
  readonly removed: string[] = [];
  /** Images, networks and volumes by name, with their labels (what the emulator's removals check). */
  readonly images = new Map<string, Record<string, string>>([[DEFAULT_STACK_IMAGE, {}]]);
  readonly networks = new Map<string, Record<string, string>>();
  readonly volumes = new Map<string, Record<string, string>>();
  protected listeners = new Set<(e: RuntimeEvent) => void>();
  private engineListeners = new Set<(s: EngineState) => void>();
  private down = false;
  private lastNs = 0n;
  private nextPort = 40000;

  /** Docker-like RFC 3339 timestamp with ns, strictly increasing; trailing zeros trimmed like Docker. */
  protected stamp(): { time: number; timestamp: string } {
    let ns = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1000));
    if (ns <= this.lastNs) ns = this.lastNs + 1n;
    this.lastNs = ns;
    const ms = Number(ns / 1_000_000n);
    const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
    return { time: ms, timestamp: `${new Date(ms).toISOString().slice(0, 19)}${frac ? `.${frac}` : ''}Z` };
  }

  protected emit(c: FakeContainer, action: RuntimeEvent['action'], exitCode: number | null = null): void {
    const e: RuntimeEvent = {
      engineId: c.info.engineId,
      action,
      exitCode: action === 'die' ? (exitCode ?? 0) : null,
      labels: c.info.labels,
      time: Date.now(),
    };
    for (const l of [...this.listeners]) l(e);
  }

  protected check(): void {
    if (this.down)
      throw new EngineUnavailableError(
        Object.assign(new Error('connect ENOENT'), { code: 'ENOENT', syscall: 'connect' }),
      );
  }

  private get(engineId: string): FakeContainer {
    this.check();
    const c = this.containers.get(engineId);
    if (!c) throw new NoSuchContainerError(engineId);
    return c;
  }

  protected writeLine(c: FakeContainer, text: string, stream: 'stdout' | 'stderr'): LogLine {
    const l: LogLine = { ...this.stamp(), stream, text };
    c.lines.push(l);
    for (const f of c.followers) f.push(l);
    return l;
  }

  /** The container's process ended with `code`: follow streams end, `die` is emitted. */
  protected exited(c: FakeContainer, code: number): void {
    c.generation++;
    c.info.state = 'exited';
    c.info.exitCode = code;
    c.info.hostPort = null;
    c.info.address = null;
    c.info.finishedAt = Date.now();
    c.listening = false;
    for (const f of c.followers) f.end();
    c.followers.clear();
    c.onExit?.(code);
    this.emit(c, 'die', code);
  }

  protected started(c: FakeContainer): void {
    c.generation++;
    c.info.state = 'running';
    c.info.exitCode = null;
    c.info.startedAt = Date.now();
    c.info.hostPort = c.spec?.publishPort ? this.nextPort++ : null;
    c.info.address = c.info.hostPort ? this.addressOf({ engineId: c.info.engineId, port: c.info.hostPort }) : null;
    c.exited = new Promise((resolve) => (c.onExit = resolve));
    this.emit(c, 'start');
    if (c.spec) void this.interpret(c, c.generation);
  }

  /** Plays the container's script: output, sleeps (capped), listening, exit. */
  private async interpret(c: FakeContainer, generation: number): Promise<void> {
    const cmd = c.spec?.cmd ?? [];
    const script = cmd[0] === 'sh' && cmd[1] === '-c' ? (cmd[2] ?? '') : cmd.join(' ');
    await Promise.resolve();
    for (const raw of statements(script)) {
      if (c.generation !== generation) return;
      const st = expand(raw, c.spec?.env ?? {});
      const exit = /^exit\s+(\d+)$/.exec(st);
      if (exit) return this.exited(c, Number(exit[1]));
      const sleep = /^(?:exec\s+)?sleep\s+(\d+(?:\.\d+)?)$/.exec(st);
      if (sleep && Number(sleep[1]) * 1000 > SCRIPT_SLEEP_CAP_MS) return; // "forever": until stopped
      if (sleep) await new Promise((r) => setTimeout(r, Number(sleep[1]) * 1000).unref());
      if (/^(exec\s+)?httpd\b/.test(st)) {
        c.listening = true;
        return; // serves until stopped
      }
      const echo = echoOf(st);
      if (echo) this.writeLine(c, echo.text, echo.stream);
    }
    if (c.generation === generation) this.exited(c, 0);
  }

  async probe() {
    return this.down
      ? { ok: false as const, error: 'the fake engine is down' }
      : { ok: true as const, version: 'fake', apiVersion: 'fake' };
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

  async run(spec: ContainerSpec, opts: { start?: boolean } = {}): Promise<ContainerInfo> {
    this.check();
    if (!this.images.has(spec.image)) throw new NoSuchImageError(spec.image);
    if ([...this.containers.values()].some((c) => c.info.name === spec.name))
      throw new ConflictError(`the container name "/${spec.name}" is already in use`);
    for (const name of namedVolumes(spec.binds))
      if (!this.volumes.has(name)) this.volumes.set(name, volumeLabelsFor(spec.labels));
    const engineId = randomBytes(32).toString('hex');
    const info: ContainerInfo = {
      engineId,
      name: spec.name,
      labels: { ...spec.labels, [LABELS.managed]: '1' },
      state: 'created',
      exitCode: null,
      hostPort: null,
      address: null,
      startedAt: null,
      finishedAt: null,
      memoryLimit: spec.memoryBytes,
      oomKilled: false,
    };
    const c: FakeContainer = { info, spec, lines: [], followers: new Set(), generation: 0 };
    this.containers.set(engineId, c);
    if (opts.start !== false) this.started(c);
    return { ...c.info };
  }
  async start(engineId: string): Promise<ContainerInfo> {
    const c = this.get(engineId);
    if (c.info.state !== 'running') this.started(c);
    return { ...c.info };
  }
  async stop(engineId: string, _graceSeconds: number): Promise<void> {
    this.check();
    const c = this.containers.get(engineId);
    if (c?.info.state === 'running' && !c.pinned) this.exited(c, 143);
  }
  async kill(engineId: string, _signal: string): Promise<void> {
    const c = this.get(engineId);
    if (c.pinned) return;
    if (c.info.state !== 'running') throw new ConflictError(`container ${engineId} is not running`);
    this.exited(c, 137);
  }
  async remove(engineId: string): Promise<void> {
    this.check();
    const c = this.containers.get(engineId);
    this.removed.push(engineId);
    if (!c || c.pinned) return;
    if (c.info.state === 'running') this.exited(c, 137);
    this.containers.delete(engineId);
    this.emit(c, 'destroy');
  }
  async inspect(engineId: string): Promise<ContainerInfo | null> {
    this.check();
    const c = this.containers.get(engineId);
    return c ? { ...c.info } : null;
  }
  async ready({ engineId, address }: { engineId: string; address: Address | null }): Promise<boolean> {
    const c = this.containers.get(engineId);
    return address !== null && !!c?.listening && c.info.address?.port === address.port;
  }
  async list(labels: Record<string, string>) {
    this.check();
    return [...this.containers.values()]
      .filter((c) => Object.entries(labels).every(([k, v]) => c.info.labels[k] === v))
      .map((c) => ({ ...c.info }));
  }
  async states(labels: Record<string, string>) {
    return (await this.list(labels)).map((c) => ({ engineId: c.engineId, state: c.state }));
  }
  async wait(engineId: string): Promise<number> {
    const c = this.get(engineId);
    if (c.pinned || c.info.state !== 'running' || !c.exited) return c.info.exitCode ?? 0;
    return c.exited;
  }
  async updateMemory(engineId: string, memoryBytes: number): Promise<void> {
    this.get(engineId).info.memoryLimit = memoryBytes;
  }
  async exec(engineId: string, cmd: string[], o: { env?: Record<string, string> } = {}) {
    const c = this.get(engineId);
    if (c.info.state !== 'running') throw new ConflictError(`container ${engineId} is not running`);
    const script =
      cmd[0] === 'sh' && cmd[1] === '-c' ? (cmd[2] ?? '') : cmd.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ');
    let stdout = '';
    let stderr = '';
    for (const raw of statements(script)) {
      const st = expand(raw, { ...c.spec?.env, ...o.env });
      const exit = /^exit\s+(\d+)$/.exec(st);
      if (exit) return { exitCode: Number(exit[1]), stdout, stderr };
      const echo = echoOf(st);
      if (echo?.stream === 'stderr') stderr += `${echo.text}\n`;
      else if (echo) stdout += `${echo.text}\n`;
    }
    return { exitCode: 0, stdout, stderr };
  }
  async execStream(
    engineId: string,
    cmd: string[],
    o: { env?: Record<string, string> } = {},
  ): Promise<{ stdout: Readable; exitCode: Promise<number> }> {
    const r = await this.exec(engineId, cmd, o);
    return { stdout: Readable.from([Buffer.from(r.stdout)]), exitCode: Promise.resolve(r.exitCode) };
  }

  onEvent(listener: (e: RuntimeEvent) => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  async logs(engineId: string, opts: { follow: boolean; sinceMs?: number; tail?: number }) {
    const c = this.get(engineId);
    const f: Follow = new Follow(() => c.followers.delete(f));
    const from = c.lines.filter((l) => opts.sinceMs === undefined || l.time >= opts.sinceMs);
    for (const l of opts.tail !== undefined ? from.slice(-opts.tail) : from) f.push(l);
    if (opts.follow && c.info.state === 'running') c.followers.add(f);
    else f.end();
    return f;
  }
  async stats(engineId: string): Promise<StatsSample | null> {
    this.check();
    const c = this.containers.get(engineId);
    if (c?.info.state !== 'running') return null;
    return {
      time: Date.now(),
      cpu: 0,
      memoryUsage: 1024 * 1024,
      memoryLimit: c.info.memoryLimit,
      memoryMaxUsage: 1024 * 1024,
      swapUsage: 0,
      swapLimit: 0,
    };
  }
  async close() {}

  // Images, networks, volumes: names and labels.
  async ensureBaseImage(tag: string) {
    this.check();
    if (!this.images.has(tag)) this.images.set(tag, {});
  }
  async buildImage(o: { tag: string; labels: Record<string, string> }): Promise<void> {
    this.check();
    this.images.set(o.tag, { ...o.labels });
  }
  async imageExists(tag: string) {
    return this.images.has(tag);
  }
  async removeImage(tag: string) {
    this.check();
    this.images.delete(tag);
  }
  async imageCommand(tag: string) {
    this.check();
    if (!this.images.has(tag)) throw new NoSuchImageError(tag);
    return tag === DEFAULT_STACK_IMAGE ? 'sh' : '';
  }
  async imageLabels(tag: string) {
    this.check();
    const labels = this.images.get(tag);
    return labels ? { ...labels } : null;
  }
  /** No registry here: the fake engine's pulls fail as an offline engine's do. */
  async pullImage(ref: string): Promise<{ digest: string }> {
    this.check();
    throw new Error(
      `Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host (pulling ${ref})`,
    );
  }
  async importImage(o: { tag: string }) {
    this.images.set(o.tag, {});
  }
  async commit(engineId: string, o: { tag: string; changes: string[] }) {
    const labels = { ...this.get(engineId).info.labels };
    // `LABEL k="v" k2="v2"` changes, as the engine applies them.
    for (const change of o.changes.filter((c) => c.startsWith('LABEL ')))
      for (const [, key, quoted, bare] of change.matchAll(/([^\s=]+)=(?:"([^"]*)"|(\S*))/g))
        labels[key] = quoted ?? bare;
    this.images.set(o.tag, labels);
  }
  /** The fake engine takes the new files (none is kept) and makes the image with the base's labels and the new ones. */
  async layerImage(o: LayerImageSpec) {
    this.check();
    const base = this.images.get(o.base);
    if (!base) throw new NoSuchImageError(o.base);
    await o.fill(async (_header, body) => {
      if (body && !Buffer.isBuffer(body)) await finished(body.resume());
    });
    this.images.set(o.tag, { ...base, ...o.labels });
    return true;
  }
  async ensureNetwork(name: string, labels: Record<string, string>) {
    if (!this.networks.has(name)) this.networks.set(name, { ...labels, [LABELS.managed]: '1' });
  }
  async removeNetwork(name: string) {
    this.networks.delete(name);
  }
  async removeVolume(name: string) {
    this.volumes.delete(name);
  }
  async networkLabels(name: string) {
    return this.networks.get(name) ?? null;
  }
  async volumeLabels(name: string) {
    return this.volumes.get(name) ?? null;
  }

  // Interactive containers are not modelled: the one-off tests that need a terminal use Docker.
  async attach(engineId: string): Promise<Duplex> {
    this.get(engineId);
    throw new Error('attach is not modelled by the fake runtime');
  }
  async resize() {}
  async putArchive(engineId: string) {
    this.get(engineId);
  }
}

/** `a; b && c` → ['a', 'b', 'c'] (quotes are not parsed: scripts of tests keep to simple words). */
function statements(script: string): string[] {
  return script
    .split(/;|&&|\n/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function expand(st: string, env: Record<string, string>): string {
  return st.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => env[name] ?? '');
}

function echoOf(st: string): { text: string; stream: 'stdout' | 'stderr' } | null {
  const m = /^echo(?:\s+(.*?))?(\s*>&2)?$/.exec(st);
  if (!m || /\s>>?\s*[^&\s]/.test(st)) return null; // written to a file, not to the output
  return { text: (m[1] ?? '').replace(/^(['"])(.*)\1$/, '$2'), stream: m[2] ? 'stderr' : 'stdout' };
}
