// Follows the stdout/stderr of every container of this emulator instance through the runtime:
// those running (or stopped with unread output) at start, then each one the engine starts.
// Resuming: each container's cursor (newest stored Docker timestamp, ns, and the texts stored at
// exactly that timestamp) is persisted with the lines; a new stream starts a second before it and
// skips what is at or before it, so a container or emulator restart loses and repeats nothing.
// Engine outages: a live stream cut while its container still runs is opened again (with a
// back-off); when the engine is unreachable, the runtime's 'up' transition re-lists and resumes
// every container from its cursor.

import {
  type ContainerRuntime,
  EngineUnavailableError,
  LABELS,
  type LogLine,
  NoSuchContainerError,
  type RuntimeEvent,
} from '../../runtime/runtime.ts';
import { type Logger } from '../../shared/logger.ts';
import { containerName, newLine, normaliseTimestamp } from './log-line.ts';
import { type Cursor, type LogsPipeline } from './logs.pipeline.ts';

export interface CollectorDeps {
  runtime: ContainerRuntime;
  /** Only this emulator instance's containers are followed. */
  instanceId: string;
  pipeline: LogsPipeline;
  logger: Logger;
}

interface Follower {
  engineId: string;
  appId: string;
  container: string;
  active: boolean;
  /** A start event arrived while a stream was still draining: read again after it. */
  again: boolean;
  stream: { close(): void } | null;
  done: Promise<void>;
}

/** Types whose output is not application logs. */
const IGNORED_TYPES = new Set(['build']);

export function createLogsCollector(deps: CollectorDeps) {
  const { runtime, pipeline, logger } = deps;
  const followers = new Map<string, Follower>();
  let unsubscribe: (() => void) | null = null;
  let offEngine: (() => void) | null = null;
  let stopped = false;
  // Back-off pauses end early when collection stops.
  const sleepers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((r) => {
      const done = () => {
        clearTimeout(t);
        sleepers.delete(done);
        r();
      };
      const t = setTimeout(done, ms);
      sleepers.add(done);
    });

  function identify(labels: Record<string, string>): { appId: string; container: string } | null {
    if (labels[LABELS.instance] !== deps.instanceId) return null;
    const appId = labels[LABELS.appId];
    const type = labels[LABELS.type];
    const container = containerName(type, labels[LABELS.index]);
    if (!appId || !container || IGNORED_TYPES.has(type)) return null;
    // An attached one-off's output belongs to its terminal, not to the app's logs.
    if (labels[LABELS.terminal] === '1') return null;
    return { appId, container };
  }

  function follow(engineId: string, labels: Record<string, string>, live: boolean): void {
    if (stopped) return;
    const who = identify(labels);
    if (!who) return;
    let f = followers.get(engineId);
    if (f?.active) {
      f.again = true;
      return;
    }
    f = { engineId, ...who, active: true, again: false, stream: null, done: Promise.resolve() };
    followers.set(engineId, f);
    f.done = run(f, live);
  }

  async function run(f: Follower, live: boolean): Promise<void> {
    let cuts = 0;
    try {
      do {
        f.again = false;
        let failed = false;
        try {
          await readOnce(f, live);
        } catch (err) {
          // An engine call that failed (a timeout under load, a socket reset): retried below while the
          // container runs, as a cut stream is. Giving up here left a running container's output unread.
          if (stopped) break;
          logger.warn({ err, engineId: f.engineId }, 'logs: following a container failed, retrying');
          failed = true;
        }
        if (!failed && (!live || f.again || stopped)) {
          live = true;
          continue;
        }
        // A live stream ended: the container stopped, or the stream was cut (engine restart,
        // socket gone). Still running → read again from the cursor, backing off if it repeats.
        // An inspect that fails (not "no such container": that is null) is no answer: try again too.
        const info = await runtime.inspect(f.engineId).catch(() => 'unknown' as const);
        const runs = info === 'unknown' || (info && (info.state === 'running' || info.state === 'restarting'));
        if (runs && !stopped && followers.get(f.engineId) === f) {
          await pause(Math.min(5000, 100 * 2 ** cuts++));
          f.again = true;
          live = true;
        }
      } while (f.again && !stopped);
    } catch (err) {
      if (!stopped) logger.warn({ err, engineId: f.engineId }, 'logs: following a container failed');
    } finally {
      f.active = false;
      f.stream = null;
    }
  }

  async function readOnce(f: Follower, live: boolean): Promise<void> {
    const cursor = pipeline.cursorOf(f.engineId);
    // A second of margin: whatever the engine's rounding of `since`, nothing after the cursor is missed.
    const sinceMs = cursor ? Date.parse(cursor.lastTs) - 1000 : undefined;
    let stream;
    try {
      stream = await runtime.logs(f.engineId, { follow: live, sinceMs });
    } catch (err) {
      if (err instanceof NoSuchContainerError) return; // removed meanwhile
      throw err;
    }
    f.stream = stream;
    if (stopped) return stream.close();
    const skip = resumeFilter(cursor);
    const take = (l: LogLine) => {
      const ts = normaliseTimestamp(l.timestamp);
      if (!ts || skip(ts, l.text)) return;
      pipeline.ingest(newLine(f.appId, ts, l.time, f.container, l.stream === 'stderr' ? 1 : 0, l.text), f.engineId);
    };
    for await (const l of stream) {
      take(l);
      // The rest of a burst in one go: one await per burst, not per line.
      if (stream.takeWaiting) for (const w of stream.takeWaiting()) take(w);
      if (pipeline.full()) await pipeline.room();
      if (stopped) break;
    }
  }

  function onEvent(e: RuntimeEvent): void {
    if (e.action === 'start') follow(e.engineId, e.labels, true);
    else if (e.action === 'destroy') {
      const f = followers.get(e.engineId);
      f?.stream?.close();
      followers.delete(e.engineId);
      // Let the last lines be stored before the cursor goes (it would be re-created otherwise).
      void f?.done
        .then(() => pipeline.idle())
        .then(() => !followers.has(e.engineId) && pipeline.forgetCursor(e.engineId));
    }
  }

  /** Every container of this instance: running ones followed, stopped ones read once (output printed while unobserved). */
  async function scan(): Promise<void> {
    const found = await runtime.list({ [LABELS.instance]: deps.instanceId });
    for (const c of found) follow(c.engineId, c.labels, c.state === 'running' || c.state === 'restarting');
  }

  return {
    /** Follows what runs now; with the engine down, starts once it is back (rejects only on other failures). */
    async start(): Promise<void> {
      stopped = false;
      // Subscribe first: a container started while listing is then seen twice, never missed.
      unsubscribe = runtime.onEvent(onEvent);
      offEngine = runtime.onEngine((state) => {
        if (state === 'up' && !stopped)
          scan().catch((err) => logger.warn({ err }, 'logs: could not list the containers to follow'));
      });
      try {
        await scan();
      } catch (err) {
        if (!(err instanceof EngineUnavailableError)) throw err;
        logger.warn('logs: Docker engine unavailable, container output is collected once it is back');
      }
    },

    async stop(): Promise<void> {
      stopped = true;
      unsubscribe?.();
      unsubscribe = null;
      offEngine?.();
      offEngine = null;
      for (const wake of [...sleepers]) wake();
      const all = [...followers.values()];
      for (const f of all) f.stream?.close();
      await Promise.all(all.map((f) => f.done));
      followers.clear();
    },

    following: () =>
      [...followers.values()]
        .filter((f) => f.active)
        .map((f) => ({ engineId: f.engineId, appId: f.appId, container: f.container })),
  };
}

/**
 * Skips the lines a resumed stream repeats: before the cursor, or at exactly its timestamp with a
 * text already stored. Once a line after the cursor is seen everything passes (stdout and stderr
 * timestamps may interleave slightly out of order in a live stream).
 */
export function resumeFilter(cursor: Cursor | null): (ts: string, text: string) => boolean {
  if (!cursor) return () => false;
  const texts = [...cursor.lastTexts];
  let past = false;
  return (ts, text) => {
    if (past) return false;
    if (ts < cursor.lastTs) return true;
    if (ts === cursor.lastTs) {
      const i = texts.indexOf(text);
      if (i >= 0) {
        texts.splice(i, 1);
        return true;
      }
      return false;
    }
    past = true;
    return false;
  };
}
