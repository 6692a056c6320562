// `scalingo-emulator run <app> -- <command>`: a one-off container with the local terminal attached,
// the way the official Go CLI's `scalingo run` does it (docs/research/clients-runtime.md §1): POST
// /run, follow the start-one-off operation, `CONNECT <attach_url>`, raw bytes both ways, PUT resizes
// on SIGWINCH, then `GET <attach_url>/wait` for the exit code, which becomes this process's own.

import { connect as netConnect, type Socket } from 'node:net';
import { type Readable, type Writable } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { parseArgs } from 'node:util';

export const RUN_USAGE = `Usage: scalingo-emulator run <app> [options] -- <command…>

Options:
  --api <url>       the emulator's API        [env EMULATOR_API_URL, default http://127.0.0.1:5100]
  --token <token>   an API token              [env EMULATOR_API_TOKEN; printed at the emulator's start]
  --detached        run in the background; the output goes to the app's logs
  --size <name>     container size            [default M]
  -e, --env K=V     extra environment variable (repeatable)`;

export interface RunIo {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: Writable & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: Writable;
  env: Record<string, string | undefined>;
  /** Terminal resizes (SIGWINCH); returns the unsubscribe function. */
  onResize?: (listener: () => void) => () => void;
}

const defaultIo = (): RunIo => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onResize: (l) => (process.on('SIGWINCH', l), () => void process.off('SIGWINCH', l)),
});

/** Returns the exit code of the command (or 1 when the run itself failed, 2 for bad usage). */
export async function runCli(argv: string[], io: RunIo = defaultIo()): Promise<number> {
  const sep = argv.indexOf('--');
  let parsed;
  try {
    parsed = parseArgs({
      args: sep >= 0 ? argv.slice(0, sep) : argv,
      allowPositionals: true,
      options: {
        api: { type: 'string' },
        token: { type: 'string' },
        detached: { type: 'boolean' },
        size: { type: 'string' },
        env: { type: 'string', short: 'e', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${RUN_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [app, ...rest] = positionals;
  const command = [...rest, ...(sep >= 0 ? argv.slice(sep + 1) : [])].join(' ');
  const api = (values.api ?? io.env.EMULATOR_API_URL ?? 'http://127.0.0.1:5100').replace(/\/+$/, '');
  const token = values.token ?? io.env.EMULATOR_API_TOKEN;
  if (values.help || !app || !command || !token) {
    if (!values.help)
      io.stderr.write(
        `${!token ? 'an API token is needed (--token or EMULATOR_API_TOKEN)' : 'an app and a command are needed'}\n\n`,
      );
    io.stderr.write(`${RUN_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const env: Record<string, string> = { TERM: io.env.TERM ?? '', CLIENT_OS: process.platform };
  for (const kv of values.env ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) return fail(io, `invalid --env "${kv}": the format is K=V`, 2);
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const auth = `Basic ${Buffer.from(`:${token}`).toString('base64')}`;
  const call = (method: string, url: string, body?: unknown) =>
    fetch(url, {
      method,
      headers: {
        authorization: auth,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });

  const res = await call('POST', `${api}/v1/apps/${app}/run`, {
    command,
    env,
    size: values.size ?? 'M',
    detached: !!values.detached,
    has_uploads: false,
  });
  if (res.status !== 200) return fail(io, `run refused (${res.status}): ${await res.text()}`);
  const run = (await res.json()) as { container: { label: string }; attach_url: string };
  if (values.detached) {
    io.stdout.write(
      `Starting one-off '${command}' for app '${app}' as ${run.container.label}: its output goes to the app's logs (GET ${api}/v1/apps/${app}/logs).\n`,
    );
    return 0;
  }

  // As the Go CLI: the operation from Location, every second until done, then its attach_url.
  let attachUrl = run.attach_url;
  const location = res.headers.get('location');
  for (let i = 0; location && i < 120; i++) {
    const op = (
      (await (await call('GET', location)).json()) as {
        operation: { status: string; error?: string; start_one_off_data?: { attach_url: string } };
      }
    ).operation;
    if (op.status === 'error') return fail(io, `Operation 'start-one-off' failed, an error occurred: ${op.error}`);
    if (op.status === 'done') {
      attachUrl = op.start_one_off_data?.attach_url ?? attachUrl;
      break;
    }
    await new Promise((r) => setTimeout(r, i < 5 ? 200 : 1000));
  }

  let socket: Socket;
  try {
    socket = await hijack(attachUrl, auth);
  } catch (err) {
    return fail(io, `could not attach: ${(err as Error).message}`);
  }
  const setRawMode = io.stdin.isTTY ? io.stdin.setRawMode?.bind(io.stdin) : undefined;
  const raw = !!setRawMode;
  if (raw) setRawMode?.(true);
  const resize = () => {
    if (io.stdout.columns && io.stdout.rows)
      void call('PUT', attachUrl, { width: String(io.stdout.columns), height: String(io.stdout.rows) }).catch(
        () => undefined,
      );
  };
  resize();
  const offResize = io.onResize?.(resize);
  const onInput = (b: Buffer) => socket.write(b);
  // The CLI ends input with EOT (0x04), which a TTY reads as end of file.
  const onEnd = () => socket.writable && socket.write(Buffer.from([0x04]));
  io.stdin.on('data', onInput);
  io.stdin.on('end', onEnd);
  socket.on('data', (b: Buffer) => io.stdout.write(b));
  socket.on('error', () => socket.destroy());
  socket.resume();
  await new Promise<void>((ok) => socket.on('close', () => ok()));
  io.stdin.off('data', onInput);
  io.stdin.off('end', onEnd);
  io.stdin.pause();
  offResize?.();
  if (raw) setRawMode?.(false);

  const wait = await call('GET', `${attachUrl}/wait`);
  if (wait.status === 408) return fail(io, 'Connection timed out due to inactivity, one-off aborted.', 129); // the CLI's os.Exit(-127)
  const { exit_code } = (await wait.json()) as { exit_code?: number };
  return exit_code ?? 0;
}

function fail(io: RunIo, message: string, code = 1): number {
  io.stderr.write(`${message}\n`);
  return code;
}

/** `CONNECT <path>` on a raw (or TLS) connection; resolves once `HTTP/1.1 200` came back. Bytes after the head are pushed back. */
function hijack(attachUrl: string, auth: string): Promise<Socket> {
  const u = new URL(attachUrl);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket: Socket =
      u.protocol === 'https:'
        ? tlsConnect({ host: u.hostname, port, servername: u.hostname })
        : netConnect(port, u.hostname);
    let head = Buffer.alloc(0);
    const onData = (b: Buffer) => {
      head = Buffer.concat([head, b]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1'))?.[1];
      if (status !== '200') {
        socket.destroy();
        return reject(new Error(`HTTP ${status ?? '?'} ${head.subarray(end + 4).toString('utf8')}`.trim()));
      }
      // Paused until the caller reads: nothing after the head is lost.
      socket.pause();
      const restBytes = head.subarray(end + 4);
      if (restBytes.length) socket.unshift(restBytes);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once(u.protocol === 'https:' ? 'secureConnect' : 'connect', () =>
      socket.write(`CONNECT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth}\r\n\r\n`),
    );
  });
}
