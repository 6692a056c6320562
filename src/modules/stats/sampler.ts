import { type Db, tx } from '../../db/database.ts';
import { type ContainerInfo, type ContainerRuntime, LABELS, type StatsSample } from '../../runtime/runtime.ts';
import { type Clock, type ClockTimer, ManualClock } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type SampleRow, type StatsStore } from './stats.store.ts';

export interface SamplerDeps {
  db: Db;
  store: StatsStore;
  runtime: ContainerRuntime;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  intervalMs: number;
  /** Engine reads in flight at once (a stats read mostly waits on the engine). */
  concurrency: number;
  retentionMs: number;
  /** Called after each stored round (the alert engine). */
  onRound?: (rows: SampleRow[], now: number) => void | Promise<void>;
}

/** A running container of this emulator instance with its platform identity, read from its labels. */
export interface LabelledContainer {
  info: ContainerInfo;
  appId: string;
  type: string;
  index: number;
}

/** An app's container with its platform identity, from its labels; null for another container (an addon server). */
function labelledOf(info: ContainerInfo): LabelledContainer | null {
  const l = info.labels;
  const index = Number(l[LABELS.index]);
  if (!l[LABELS.appId] || !l[LABELS.type] || !Number.isInteger(index)) return null;
  return { info, appId: l[LABELS.appId], type: l[LABELS.type], index };
}

const instanceLabels = (instanceId: string): Record<string, string> => ({
  [LABELS.managed]: '1',
  [LABELS.instance]: instanceId,
});

/** Running containers of this emulator instance, optionally of one app. */
export async function runningContainers(
  runtime: ContainerRuntime,
  instanceId: string,
  appId?: string,
): Promise<LabelledContainer[]> {
  const labels = instanceLabels(instanceId);
  if (appId) labels[LABELS.appId] = appId;
  const out: LabelledContainer[] = [];
  for (const info of await runtime.list(labels)) {
    const c = info.state === 'running' ? labelledOf(info) : null;
    if (c) out.push(c);
  }
  return out;
}

/**
 * The sampler's view of the running containers: one engine list a round (`states`), and an inspect only for a
 * container not seen before. What a round reads of a container cannot change while it exists: its labels, and an
 * app container's memory limit (set when it is created; a new size is a new container). With 200 containers, the
 * inspect of each every round was most of a round's engine calls (issue 40).
 */
export function createRunningContainers(runtime: ContainerRuntime, instanceId: string, concurrency: number) {
  // Engine id → its identity; null: not an app's container (an addon server), not inspected again either.
  const known = new Map<string, LabelledContainer | null>();
  return async function running(): Promise<LabelledContainer[]> {
    const states = await runtime.states(instanceLabels(instanceId));
    const listed = new Set<string>();
    const unknown: string[] = [];
    for (const s of states) {
      listed.add(s.engineId);
      if (s.state === 'running' && !known.has(s.engineId)) unknown.push(s.engineId);
    }
    for (const id of known.keys()) if (!listed.has(id)) known.delete(id);
    const infos = await mapConcurrent(unknown, concurrency, (id) => runtime.inspect(id).catch(() => null));
    // A container gone between the list and its inspect is not remembered: the next list no longer names it.
    for (const info of infos) if (info) known.set(info.engineId, labelledOf(info));
    const out: LabelledContainer[] = [];
    for (const s of states) {
      const c = s.state === 'running' ? known.get(s.engineId) : null;
      if (c) out.push(c);
    }
    return out;
  };
}

/** Runs fn over items with at most `limit` in flight; results keep the items' order. */
export async function mapConcurrent<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Takes the engine's stats of every running container of this instance every `intervalMs`, stores one
 * row per container in one transaction, prunes past the retention, then hands the round to the alert engine.
 * A round still running when the next tick comes makes that tick a no-op (no overlap, no queue).
 */
export function createSampler(deps: SamplerDeps) {
  const { store, runtime, clock, logger } = deps;
  // Highest figures seen per engine container (the engine's own max is not always known: cgroup v2).
  const highest = new Map<string, { memory: number; swap: number }>();
  let timer: ClockTimer | undefined;
  let round: Promise<SampleRow[]> | undefined;
  // Manual clock: the time of a tick that came while a round ran (one advance fires many ticks at once).
  let pendingAt: number | undefined;
  let lastPrune = 0;

  const readStats = (c: LabelledContainer): Promise<StatsSample | null> =>
    runtime.stats(c.info.engineId).catch((err: unknown) => {
      logger.debug({ err, engineId: c.info.engineId }, 'stats read failed');
      return null;
    });

  const running = createRunningContainers(runtime, deps.instanceId, deps.concurrency);

  async function sample(at?: number): Promise<SampleRow[]> {
    const containers = await running();
    const stats = await mapConcurrent(containers, deps.concurrency, readStats);
    const now = at ?? clock.now();
    const rows: SampleRow[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < containers.length; i++) {
      const s = stats[i];
      if (!s) continue;
      const c = containers[i];
      seen.add(c.info.engineId);
      noteHighest(c.info.engineId, s);
      rows.push({
        appId: c.appId,
        type: c.type,
        index: c.index,
        time: now,
        cpu: s.cpu,
        memory: s.memoryUsage,
        memoryLimit: s.memoryLimit || c.info.memoryLimit,
        swap: s.swapUsage,
        swapLimit: effectiveSwapLimit(s, c.info.memoryLimit),
      });
    }
    for (const id of highest.keys()) if (!seen.has(id)) highest.delete(id);
    if (!deps.db.open) return rows;
    tx(deps.db, () => {
      for (const r of rows) store.insertSample(r);
      if (now - lastPrune >= 60_000) {
        store.prune(now - deps.retentionMs);
        lastPrune = now;
      }
    });
    await deps.onRound?.(rows, now);
    return rows;
  }

  // The bound is wall-clock time (an engine call that hangs), not platform time.
  function boundedRound(at?: number): Promise<SampleRow[]> {
    const limit = Math.max(30_000, deps.intervalMs * 2);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`stats round took longer than ${limit} ms`)), limit);
      timer.unref();
    });
    return Promise.race([sample(at), late]).finally(() => clearTimeout(timer));
  }

  function noteHighest(engineId: string, s: StatsSample): void {
    const h = highest.get(engineId);
    if (!h) highest.set(engineId, { memory: Math.max(s.memoryMaxUsage, s.memoryUsage), swap: s.swapUsage });
    else {
      if (s.memoryMaxUsage > h.memory) h.memory = s.memoryMaxUsage;
      if (s.memoryUsage > h.memory) h.memory = s.memoryUsage;
      if (s.swapUsage > h.swap) h.swap = s.swapUsage;
    }
  }

  /** One round now (or the one in flight); the timer uses the same path. */
  function sampleOnce(at?: number): Promise<SampleRow[]> {
    // A round never hangs on an engine that stopped answering: the next tick starts a new one.
    round ??= boundedRound(at).finally(() => {
      round = undefined;
      // A manual clock's ticks are not skipped: the latest one runs next, at its own time, so alert
      // durations measured across an advance are what they would have been.
      if (pendingAt !== undefined) {
        const next = pendingAt;
        pendingAt = undefined;
        sampleOnce(next).catch((err: unknown) => logger.warn({ err }, 'stats sample failed'));
      }
    });
    return round;
  }

  return {
    sampleOnce,
    highest: (engineId: string) => highest.get(engineId),
    noteHighest,
    start(): void {
      if (timer) return;
      // On the emulator's clock: with a manual clock, sample rounds (and alerts) follow its advances.
      timer = clock.setInterval(() => {
        const at = clock.now();
        if (round) {
          if (clock instanceof ManualClock) pendingAt = at;
          return;
        }
        sampleOnce(at).catch((err: unknown) => logger.warn({ err }, 'stats sample failed'));
      }, deps.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clock.clearInterval(timer);
      timer = undefined;
      pendingAt = undefined;
      await round?.catch(() => undefined);
    },
  };
}

/**
 * Docker allows as much swap as memory when a memory limit is set and no memory+swap limit is (its
 * default), and the CLI divides by swap_limit: the emulator reports that figure when the engine gives none.
 */
export function effectiveSwapLimit(s: StatsSample, containerMemoryLimit: number): number {
  return s.swapLimit > 0 ? s.swapLimit : s.memoryLimit || containerMemoryLimit;
}

export type Sampler = ReturnType<typeof createSampler>;
