// Commands run in a running container of the Docker runtime (exec), their output collected or streamed.

import { type Duplex, PassThrough, type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { type ContainerRuntime } from './runtime.ts';

export function dockerExec(engine: () => Promise<Docker>): Pick<ContainerRuntime, 'exec' | 'execStream'> {
  return {
    async exec(engineId, cmd, o = {}) {
      const { stdout, stderr, exitCode } = await startExec(await engine(), engineId, cmd, o);
      const max = o.maxBytes ?? 1024 * 1024;
      const collect = (s: Readable) =>
        new Promise<string>((resolve) => {
          let buf = '';
          s.on('data', (c: Buffer) => {
            if (buf.length < max) buf += c.toString('utf8').slice(0, max - buf.length);
          });
          s.on('end', () => resolve(buf));
          s.on('error', () => resolve(buf));
        });
      const [out, err] = await Promise.all([collect(stdout), collect(stderr)]);
      return { exitCode: await exitCode, stdout: out, stderr: err };
    },

    async execStream(engineId, cmd, o = {}) {
      const { stdout, stderr, exitCode } = await startExec(await engine(), engineId, cmd, o);
      stderr.resume();
      return { stdout, exitCode };
    },
  };
}

/** Starts an exec; stdout and stderr are demultiplexed into two streams that end with it. */
async function startExec(
  docker: Docker,
  engineId: string,
  cmd: string[],
  o: { user?: string; env?: Record<string, string>; stdin?: Readable },
) {
  const env = o.env ? Object.entries(o.env).map(([k, v]) => `${k}=${v}`) : undefined;
  const exec = await docker
    .getContainer(engineId)
    .exec({ Cmd: cmd, AttachStdin: !!o.stdin, AttachStdout: true, AttachStderr: true, User: o.user, Env: env });
  const raw = (await exec.start({ hijack: true, stdin: !!o.stdin })) as unknown as Duplex;
  const input = o.stdin;
  if (input) {
    // The hijacked connection carries stdin raw (not multiplexed): piped, then half-closed at the input's end, which
    // closes the command's stdin. A command that exits before reading it all ends the output: the input is dropped.
    input.on('error', () => raw.destroy());
    raw.on('close', () => input.destroy());
    input.pipe(raw);
  }
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(raw, stdout, stderr);
  const ended = new Promise<void>((resolve) => {
    raw.on('end', resolve);
    raw.on('close', resolve);
    raw.on('error', () => resolve());
  });
  void ended.then(() => {
    stdout.end();
    stderr.end();
    // The output is over: a half-open connection still writing the rest of an unread input would stay open.
    if (o.stdin && !o.stdin.readableEnded) raw.destroy();
  });
  const exitCode = ended.then(async () => (await exec.inspect()).ExitCode ?? -1);
  return { stdout, stderr, exitCode };
}
