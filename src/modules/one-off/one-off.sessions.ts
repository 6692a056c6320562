// The life of each one-off container after the run request: created in Docker, started (at once
// when detached, when a terminal attaches otherwise), watched until it exits, then removed from
// Docker. Kept in memory: what a terminal, an upload or `/wait` needs to find its container.

import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type ContainerRow, type ContainersStore } from '../containers/containers.store.ts';

export interface TerminalSize {
  width: number;
  height: number;
}

export interface Session {
  containerId: string;
  appId: string;
  label: string;
  detached: boolean;
  engineId: string | null;
  /** The engine container id once Docker created it (rejects when the creation failed). */
  ready: Promise<string>;
  started: boolean;
  /** The start under way (a terminal attached): a stop waits for it, then stops the normal way. */
  starting: Promise<void> | null;
  /** A terminal claimed the container: no second terminal, no more uploads. */
  attached: boolean;
  /** A stop was asked (by the API, the idle timeout or a terminal going away). */
  stopping: boolean;
  /** Closed for inactivity: `/wait` answers 408 as the platform does. */
  idleClosed: boolean;
  /** Last size asked with PUT <attach_url> (applied when the container starts). */
  size: TerminalSize | null;
  exited: boolean;
  exit: Promise<number>;
  /** Ends the terminal connection, if one is open. */
  closeTerminal: ((why: { reason: string; idle?: boolean }) => void) | null;
}

type Internal = Session & {
  resolveReady(id: string): void;
  rejectReady(err: Error): void;
  resolveExit(code: number): void;
};

// A one-off stopped before it ever started did not run: reported as terminated (128 + SIGTERM).
export const NEVER_STARTED_EXIT_CODE = 143;

export interface SessionsDeps {
  runtime: ContainerRuntime;
  store: ContainersStore;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  stopGraceSeconds: number;
  /** How long an ended session still answers `/wait`. */
  keepEndedMs: number;
  /** True while the logs collector still reads a container's output: it is removed only after. */
  logsFollowing?: (engineId: string) => boolean;
}

export function createSessions(deps: SessionsDeps) {
  const { runtime, store, clock, logger } = deps;
  const sessions = new Map<string, Internal>();
  // `die` seen on the engine's event stream: by then the collector has seen `start` (same stream, in order).
  const died = new Set<string>();
  // Emulator stopping: exits are still reported to waiters, the database and Docker are left alone.
  let closing = false;
  const offEvents = runtime.onEvent((e) => {
    if (e.action === 'die' && e.labels[LABELS.instance] === deps.instanceId && e.labels[LABELS.type] === 'one-off')
      died.add(e.engineId);
  });

  function open(row: ContainerRow): Session {
    let resolveReady!: (id: string) => void;
    let rejectReady!: (err: Error) => void;
    let resolveExit!: (code: number) => void;
    const ready = new Promise<string>((ok, fail) => ((resolveReady = ok), (rejectReady = fail)));
    ready.catch(() => undefined); // observed by whoever needs the engine; never an unhandled rejection
    const exit = new Promise<number>((ok) => (resolveExit = ok));
    const s: Internal = {
      containerId: row.id,
      appId: row.app_id,
      label: `${row.type}-${row.type_index}`,
      detached: row.detached === 1,
      engineId: row.engine_id,
      ready,
      started: false,
      starting: null,
      attached: false,
      stopping: false,
      idleClosed: false,
      size: null,
      exited: false,
      exit,
      closeTerminal: null,
      resolveReady: (id) => {
        s.engineId = id;
        resolveReady(id);
      },
      rejectReady,
      resolveExit,
    };
    if (row.engine_id) s.resolveReady(row.engine_id);
    sessions.set(row.id, s);
    return s;
  }

  const internal = (s: Session) => s as Internal;

  /** Waits for the exit of a started container, then records it and cleans up. */
  function watch(s: Session): void {
    void (async () => {
      const engineId = await s.ready;
      let code: number;
      try {
        code = await runtime.wait(engineId);
      } catch {
        code = (await runtime.inspect(engineId).catch(() => null))?.exitCode ?? 137;
      }
      await ended(s, code);
    })().catch((err: Error) => logger.warn({ err, container: s.containerId }, 'one-off: watching the exit failed'));
  }

  /** The container is over: `/wait` gets the code, ps no longer lists it, Docker no longer has it. */
  async function ended(s: Session, code: number): Promise<void> {
    if (s.exited) return;
    s.exited = true;
    internal(s).resolveExit(code);
    if (closing) return;
    const row = store.container(s.containerId);
    if (row && row.deleted_at === null) store.markDeleted(row.id, clock.now());
    setTimeout(() => sessions.get(s.containerId) === s && sessions.delete(s.containerId), deps.keepEndedMs).unref();
    if (!s.engineId) return;
    if (s.started) await drained(s.engineId);
    await runtime
      .remove(s.engineId)
      .catch((err: Error) => logger.warn({ err, container: s.containerId }, 'one-off: could not remove the container'));
  }

  /** Lets the logs collector read the last lines (a detached one-off's output is app logs). */
  async function drained(engineId: string): Promise<void> {
    if (!deps.logsFollowing) return;
    // At most ~15 s; at least until `die` was seen (or ~3 s), then until the collector let go.
    for (let i = 0; i < 150; i++) {
      if ((died.has(engineId) || i >= 30) && !deps.logsFollowing(engineId)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    died.delete(engineId);
  }

  /**
   * Stops a one-off the normal way: SIGTERM, grace, SIGKILL (runtime.stop). A terminal that went
   * away first hangs up (SIGHUP), as closing a real terminal does: shells exit on it.
   */
  async function shutdown(s: Session, opts: { hangup?: boolean; grace?: number } = {}): Promise<void> {
    s.stopping = true;
    let engineId: string;
    try {
      engineId = await s.ready;
    } catch {
      return; // never created: nothing to stop
    }
    // The process may already run (and print) while Docker's start call returns: not "never started".
    if (!s.started && s.starting) await s.starting.catch(() => undefined);
    if (!s.started) {
      await runtime.remove(engineId).catch(() => undefined);
      return ended(s, NEVER_STARTED_EXIT_CODE);
    }
    if (s.exited) return;
    if (opts.hangup) await runtime.kill(engineId, 'SIGHUP').catch(() => undefined);
    await runtime.stop(engineId, opts.grace ?? deps.stopGraceSeconds);
  }

  return {
    open,
    get: (containerId: string) => sessions.get(containerId),
    all: () => [...sessions.values()] as Session[],
    watch,
    ended,
    shutdown,
    /** Docker could not create the container: the run fails plainly. */
    failed(s: Session, err: Error): void {
      internal(s).rejectReady(err);
      void ended(s, 127);
    },
    created(s: Session, engineId: string): void {
      internal(s).resolveReady(engineId);
    },
    close(): void {
      closing = true;
      offEvents();
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
