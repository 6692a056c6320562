import { execFileSync } from 'node:child_process';
import { LABELS } from '../../src/runtime/runtime.ts';

// Tests observe Docker through its own CLI, independently of the emulator's code.
export function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function dockerPs(labelFilters: string[], all = false): { id: string; name: string; state: string }[] {
  const out = docker(
    'ps',
    ...(all ? ['-a'] : []),
    '--no-trunc',
    ...labelFilters.flatMap((l) => ['--filter', `label=${l}`]),
    '--format',
    '{{.ID}}\t{{.Names}}\t{{.State}}',
  );
  return out
    ? out.split('\n').map((l) => {
        const [id, name, state] = l.split('\t');
        return { id, name, state };
      })
    : [];
}

export function removeByLabel(label: string): void {
  const ids = docker('ps', '-aq', '--filter', `label=${label}`);
  if (!ids) return;
  try {
    docker('rm', '-f', ...ids.split('\n'));
  } catch (err) {
    // The emulator may be removing some of them at the same moment: what matters is that none is left.
    if (!/already in progress|No such container/.test((err as Error).message)) throw err;
    eventuallySync(() => !docker('ps', '-aq', '--filter', `label=${label}`), `containers labelled ${label} to be gone`);
  }
}

/** Polls a synchronous check for up to 30 s (clean-up paths, where an async wait is not possible). */
function eventuallySync(check: () => boolean, what: string): void {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    execFileSync('sleep', ['0.2']);
  }
}

/** An error that ends `eventually` at once: the awaited state can no longer come (an addon in error, say). */
export function giveUp(message: string): Error {
  return Object.assign(new Error(message), { giveUp: true });
}

/** Polls until fn returns a truthy value or the deadline passes (no timing assertions: only a ceiling). */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      if ((err as { giveUp?: boolean }).giveUp)
        throw new Error(`gave up waiting for ${opts.what ?? 'condition'}: ${(err as Error).message}`);
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

/** Removes the images carrying every one of `labels` (`key=value`, or `key` for any value). */
export function removeImagesByLabel(...labels: string[]): void {
  const ids = docker('images', '-q', ...labels.flatMap((l) => ['--filter', `label=${l}`]));
  if (ids) docker('rmi', '-f', ...[...new Set(ids.split('\n'))]);
}

/** The emulator instance (its `instance` label) whose containers run `app`, for removeInstance. */
export const instanceOfApp = (app: string) =>
  docker('ps', '-a', '--filter', `label=${LABELS.appName}=${app}`, '--format', `{{.Label "${LABELS.instance}"}}`)
    .split('\n')
    .filter(Boolean)[0];

/**
 * Removes everything one emulator instance made in Docker: its containers (apps, one-offs, addon
 * servers), its images, and the volumes and networks named after it.
 */
export function removeInstance(instance: string): void {
  removeByLabel(`${LABELS.instance}=${instance}`);
  removeByLabel(`${LABELS.owner}=${instance}`);
  removeImagesByLabel(`${LABELS.instance}=${instance}`);
  // An app's dependency image carries no instance label (it outlives a deployment): it is the one this instance
  // built for an app. The Node.js images it built (no app) are shared with other instances and stay.
  removeImagesByLabel(`${LABELS.builtBy}=${instance}`, LABELS.appId);
  for (const v of docker('volume', 'ls', '-q', '--filter', `name=scalingo-emu-${instance}-`)
    .split('\n')
    .filter(Boolean))
    docker('volume', 'rm', '-f', v);
  for (const n of docker('network', 'ls', '-q', '--filter', `name=scalingo-emu-${instance}-`)
    .split('\n')
    .filter(Boolean))
    docker('network', 'rm', n);
}
