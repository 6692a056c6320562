import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { type Logger } from '../../shared/logger.ts';
import { type StoredLine } from '../logs/log-line.ts';

// The output of addon servers (issue #15): followed from Docker, kept as a bounded recent history
// per addon (what `logs --addon` shows), handed to live subscribers and to the addon's drains.
// Addon lines are not the app's logs: the platform serves them from the database API.

const KEEP_LINES = 1000;

export interface AddonLogsDeps {
  runtime: ContainerRuntime;
  logger: Logger;
  /** New lines of an addon's server, for its drains. */
  onLines?: (addonId: string, lines: StoredLine[]) => void;
}

export function createAddonLogs(deps: AddonLogsDeps) {
  const history = new Map<string, StoredLine[]>();
  const followers = new Map<string, { engineId: string; close(): void }>();
  const subscribers = new Map<string, Set<(l: StoredLine) => void>>();
  let seq = 0;

  async function run(
    addonId: string,
    appId: string,
    engineId: string,
    f: { closed: boolean; stream?: { close(): void } },
  ): Promise<void> {
    // From the server's last line already kept (the emulator's own notes do not count): nothing twice, nothing skipped.
    const lastOfServer = (history.get(addonId) ?? []).filter((l) => l.container === 'addon').pop();
    const sinceMs = lastOfServer ? lastOfServer.time_ms + 1 : undefined;
    const stream = await deps.runtime.logs(engineId, { follow: true, sinceMs, tail: sinceMs ? undefined : KEEP_LINES });
    f.stream = stream;
    if (f.closed) return stream.close();
    for await (const l of stream) {
      add(addonId, {
        seq: ++seq,
        app_id: appId,
        ts: l.timestamp,
        time_ms: l.time,
        container: 'addon',
        stream: l.stream === 'stderr' ? 1 : 0,
        text: l.text,
      });
    }
  }

  function add(addonId: string, line: StoredLine): void {
    const h = history.get(addonId) ?? [];
    h.push(line);
    if (h.length > KEEP_LINES) h.splice(0, h.length - KEEP_LINES);
    history.set(addonId, h);
    for (const s of subscribers.get(addonId) ?? []) s(line);
    deps.onLines?.(addonId, [line]);
  }

  return {
    /** Follows a server container's output (again after each start: `engineId` may change). */
    follow(addonId: string, appId: string, engineId: string): void {
      // Always anew: after a restart the old stream may not have ended yet. The history's last line
      // is where the new stream starts, so nothing is shown twice.
      followers.get(addonId)?.close();
      const f: { closed: boolean; stream?: { close(): void } } = { closed: false };
      const follower = { engineId, close: () => ((f.closed = true), f.stream?.close()) };
      followers.set(addonId, follower);
      run(addonId, appId, engineId, f)
        .catch((err: Error) => deps.logger.debug({ addonId, err: err.message }, 'addon logs: follow ended'))
        // The stream ends when the server stops: the next follow (after a restart, same container) starts again.
        .finally(() => followers.get(addonId) === follower && followers.delete(addonId));
    },
    /**
     * A line of the emulator's own about the server (image build progress, start, outage, failure),
     * in the addon's logs beside the server's output. Wall-clock time, like Docker's timestamps.
     */
    note(addonId: string, appId: string, text: string): void {
      const now = Date.now();
      add(addonId, {
        seq: ++seq,
        app_id: appId,
        ts: new Date(now).toISOString(),
        time_ms: now,
        container: 'emulator',
        stream: 0,
        text,
      });
    },
    unfollow(addonId: string): void {
      followers.get(addonId)?.close();
      followers.delete(addonId);
      history.delete(addonId);
      subscribers.delete(addonId);
    },
    /** The last `n` lines of an addon's server. */
    recent(addonId: string, n: number): StoredLine[] {
      const h = history.get(addonId) ?? [];
      return h.slice(Math.max(0, h.length - n));
    },
    subscribe(addonId: string, fn: (l: StoredLine) => void): () => void {
      let s = subscribers.get(addonId);
      if (!s) subscribers.set(addonId, (s = new Set()));
      s.add(fn);
      return () => void s.delete(fn);
    },
    stopAll(): void {
      for (const f of followers.values()) f.close();
      followers.clear();
    },
  };
}
