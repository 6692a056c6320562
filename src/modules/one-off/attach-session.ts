// A terminal on a one-off container: the raw TTY stream of Docker's attach, wired to a client
// (the CLI's hijacked CONNECT or a browser's WebSocket — see attach-server.ts), with the platform's
// rules: the container starts once the terminal is there, a connection with no data either way for
// `intervals.oneOffIdleMs` is closed and the container stopped, and a terminal that goes away takes
// its container with it.
import { type Duplex } from 'node:stream';
import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { type Clock, type ClockTimer } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type ContainersStore } from '../containers/containers.store.ts';
import { type Session, type Sessions } from './one-off.sessions.ts';

/** What a protocol adapter gives the session. */
export interface TerminalClient {
  /** Process output (raw TTY bytes). */
  send(data: Buffer): void;
  /** Closes the connection: the process ended (exitCode), or the emulator closed it (reason). */
  end(info: { exitCode?: number; reason?: string; idle?: boolean }): void;
  onInput(listener: (data: Buffer) => void): void;
  onClose(listener: () => void): void;
}

export interface AttachDeps {
  runtime: ContainerRuntime;
  store: ContainersStore;
  sessions: Sessions;
  logger: Logger;
  idleMs: number;
  /** The idle limit is platform time: on the emulator's clock. */
  clock: Clock;
}

export function createAttacher(deps: AttachDeps) {
  const { runtime, sessions, logger } = deps;

  /**
   * Attaches to the engine container, then lets the adapter answer its client (`open`), then starts
   * the container — attached before started, so no output is lost. Errors before `open` are thrown
   * (the adapter answers them as HTTP errors) and release the claim on the container.
   */
  async function connect(s: Session, open: () => TerminalClient | Promise<TerminalClient>): Promise<void> {
    let stream: Duplex;
    let client: TerminalClient;
    let engineId: string;
    try {
      engineId = await s.ready;
      stream = await runtime.attach(engineId);
      try {
        client = await open();
      } catch (err) {
        stream.destroy();
        throw err;
      }
    } catch (err) {
      s.attached = false;
      throw err;
    }
    pipe(s, stream, client);
    if (s.stopping || s.exited) return client.end({ reason: 'the container was stopped' });
    try {
      s.starting = runtime.start(engineId).then(() => void (s.started = true));
      await s.starting;
      // A stop asked meanwhile has set `stopping`: keep it (the stop goes on once the start returned).
      deps.store.setEngine(s.containerId, s.engineId, null, s.stopping ? 'stopping' : 'running');
      sessions.watch(s);
      if (s.size) await runtime.resize(engineId, s.size.width, s.size.height).catch(() => undefined);
    } catch (err) {
      logger.warn({ err, container: s.containerId }, 'one-off: the container could not start');
      client.end({ reason: `the container could not start: ${(err as Error).message}` });
      await sessions.ended(s, 127);
    }
  }

  function pipe(s: Session, stream: Duplex, client: TerminalClient): void {
    let streamEnded = false;
    let timer: ClockTimer | undefined;
    const touch = () => {
      deps.clock.clearTimeout(timer);
      timer = deps.clock.setTimeout(onIdle, deps.idleMs);
      timer.unref();
    };
    const onIdle = () => {
      if (s.exited) return;
      s.idleClosed = true;
      logger.info(
        { container: s.containerId, idleMs: deps.idleMs },
        'one-off: no data on the terminal, closing and stopping the container',
      );
      client.end({
        reason: `no data for ${Math.round(deps.idleMs / 1000)} s: the one-off container is stopped`,
        idle: true,
      });
      stopFor(s);
    };
    touch();

    stream.on('data', (b: Buffer) => {
      touch();
      client.send(b);
    });
    stream.on('error', () => undefined);
    const streamDone = () => {
      if (streamEnded) return;
      streamEnded = true;
      deps.clock.clearTimeout(timer);
      // The process ended: the client gets its exit code (WebSocket) or the end of the stream (CONNECT).
      const fallback = new Promise<undefined>((r) => {
        const t: NodeJS.Timeout = setTimeout(() => r(undefined), 5000);
        t.unref();
      });
      void Promise.race([s.exit, fallback]).then((exitCode) => client.end({ exitCode }));
    };
    stream.on('end', streamDone);
    stream.on('close', streamDone);

    client.onInput((b) => {
      touch();
      if (!streamEnded && stream.writable) stream.write(b);
    });
    client.onClose(() => {
      deps.clock.clearTimeout(timer);
      s.closeTerminal = null;
      stream.destroy();
      // The terminal went away while the process ran: no container is left behind.
      if (!streamEnded && !s.exited && !s.stopping) stopFor(s);
    });
    s.closeTerminal = (why) => client.end(why);
  }

  function stopFor(s: Session): void {
    deps.store.setState(s.containerId, 'stopping');
    void sessions
      .shutdown(s, { hangup: true })
      .catch((err: Error) => logger.warn({ err, container: s.containerId }, 'one-off: could not stop the container'));
  }

  return { connect };
}

export type Attacher = ReturnType<typeof createAttacher>;
