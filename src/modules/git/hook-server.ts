import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { isAbsolute, relative, resolve } from 'node:path';
import { type Logger } from '../../shared/logger.ts';

/** What a running `git receive-pack` is allowed to do: deploy this app as this user. */
export interface PushTicket<T> {
  context: T;
  /** The app's bare repository: the quarantine paths the hook reports must be inside it. */
  repoDir: string;
}

export type PushHandler<T> = (
  context: T,
  refs: string,
  env: Record<string, string>,
  out: (text: string) => void,
  signal: AbortSignal,
) => Promise<number>;

// The hook's first (and only) message: the token, the ref updates and git's object directories.
const MAX_MESSAGE_BYTES = 256 * 1024;
const MESSAGE_TIMEOUT_MS = 30_000;
const QUARANTINE_VARS = new Set(['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']);

/**
 * The pre-receive hooks' way back into the emulator: a TCP server on 127.0.0.1 (a port of its own,
 * chosen by the system). A hook is served only with the one-time token of the receive-pack it
 * runs under; the answer is JSON lines — `{"out": text}` to print, then `{"exit": status}`.
 */
export function createHookServer<T>(deps: { logger: Logger; onPush: PushHandler<T> }) {
  const tickets = new Map<string, PushTicket<T> & { abort: AbortController }>();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  function inside(dir: string, path: string): boolean {
    const rel = relative(dir, resolve(path));
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  }

  async function serve(socket: Socket, line: string): Promise<void> {
    const send = (m: object) => socket.writable && socket.write(`${JSON.stringify(m)}\n`);
    let message: { token?: unknown; refs?: unknown; env?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return void socket.destroy();
    }
    const ticket = typeof message.token === 'string' ? tickets.get(message.token) : undefined;
    if (!ticket || typeof message.refs !== 'string') {
      send({
        out: ' !     This push is not known to the emulator (it went through another way than its SSH endpoint).\n',
        exit: 1,
      });
      return void socket.end();
    }
    // One hook run per receive-pack: the token is spent.
    tickets.delete(message.token as string);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries((message.env ?? {}) as Record<string, unknown>)) {
      if (!QUARANTINE_VARS.has(k) || typeof v !== 'string') continue;
      // git's paths for this push lie inside the app's repository; anything else is ignored.
      if (v.split(':').every((p) => inside(ticket.repoDir, p))) env[k] = v;
    }
    const signal = ticket.abort.signal;
    const onClose = () => ticket.abort.abort();
    socket.once('close', onClose);
    let status = 1;
    try {
      status = await deps.onPush(ticket.context, message.refs, env, (text) => void send({ out: text }), signal);
    } catch (err) {
      deps.logger.error({ err }, 'git push: the push handler failed');
      send({ out: ' !     The emulator failed while handling this push (see its log).\n' });
    }
    socket.off('close', onClose);
    send({ exit: status });
    socket.end();
  }

  function onConnection(socket: Socket): void {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    socket.setTimeout(MESSAGE_TIMEOUT_MS, () => socket.destroy());
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end < 0) {
        if (buffered.length > MAX_MESSAGE_BYTES) socket.destroy();
        return;
      }
      socket.off('data', onData);
      // Builds take their time: the socket stays open as long as the push needs.
      socket.setTimeout(0);
      void serve(socket, buffered.slice(0, end));
    };
    socket.on('data', onData);
  }

  return {
    async listen(): Promise<number> {
      const s = createServer(onConnection);
      server = s;
      s.on('error', (err) => deps.logger.warn({ err }, 'git hook server error'));
      await new Promise<void>((ok, fail) => {
        s.once('error', fail);
        s.listen(0, '127.0.0.1', () => ok());
      });
      port = (s.address() as AddressInfo).port;
      return port;
    },
    port: () => port,
    /**
     * A ticket for one receive-pack: the variables to give it (its hook inherits them) and a
     * revoke() for when it ends — a hook still running is cut and its handler told to stop.
     */
    issue(context: T, repoDir: string): { env: Record<string, string>; revoke(): void } {
      const token = randomBytes(24).toString('base64url');
      const abort = new AbortController();
      tickets.set(token, { context, repoDir, abort });
      return {
        env: { SCALINGO_EMULATOR_HOOK_PORT: String(port), SCALINGO_EMULATOR_HOOK_TOKEN: token },
        revoke() {
          tickets.delete(token);
          abort.abort();
        },
      };
    },
    async close(): Promise<void> {
      for (const t of tickets.values()) t.abort.abort();
      tickets.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
    },
  };
}

export type HookServer<T> = ReturnType<typeof createHookServer<T>>;
