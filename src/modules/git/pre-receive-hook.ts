/**
 * The pre-receive hook written into every app repository. git runs it once the pushed objects are
 * received and before any ref moves; whatever it prints reaches the pusher as `remote:` lines, and
 * a non-zero exit declines the push ("[remote rejected] main -> main (pre-receive hook declined)"),
 * which is how the platform reports a failed build.
 *
 * It only relays: it hands the ref updates (and where git keeps the quarantined objects) to the
 * emulator over 127.0.0.1 with the one-time token of this push, prints what comes back, and exits
 * with the status the emulator sends. It runs with the emulator's own Node binary; written as a
 * script that works whether Node reads it as CommonJS or as an ES module.
 */
export function preReceiveHook(nodePath: string): string {
  return `#!${nodePath}
// Written by the Scalingo emulator: a push is built and deployed by the emulator, which streams the
// build output back here. Pushes go through the emulator's SSH endpoint (the app's git_url).
(async () => {
  const net = await import('node:net');
  const port = Number(process.env.SCALINGO_EMULATOR_HOOK_PORT);
  const token = process.env.SCALINGO_EMULATOR_HOOK_TOKEN;
  if (!port || !token) {
    process.stderr.write('This repository is written by the Scalingo emulator: push through its SSH endpoint (the app git_url).\\n');
    process.exit(1);
  }
  let refs = '';
  for await (const chunk of process.stdin) refs += chunk;
  const env = {};
  for (const k of ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']) if (process.env[k]) env[k] = process.env[k];
  let status = 1;
  let buffered = '';
  const socket = net.connect(port, '127.0.0.1', () => socket.write(JSON.stringify({ token, refs, env }) + '\\n'));
  socket.setEncoding('utf8');
  socket.on('data', (data) => {
    buffered += data;
    for (let i = buffered.indexOf('\\n'); i >= 0; i = buffered.indexOf('\\n')) {
      const message = JSON.parse(buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
      if (typeof message.out === 'string') process.stdout.write(message.out);
      if (typeof message.exit === 'number') status = message.exit;
    }
  });
  socket.on('error', (err) => process.stderr.write('cannot reach the emulator: ' + err.message + '\\n'));
  socket.on('close', () => process.exit(status));
})();
`;
}
