// Hands every stored batch to the drains of its app: each drain's target queues on its own, so
// delivery never holds the pipeline. Addon drains receive the output of the addon's server (issue #15):
// deliverAddon() is fed by the addon servers; stand-in addons print nothing.
import { join } from 'node:path';
import { type Logger } from '../../shared/logger.ts';
import { type StoredLine } from '../logs/log-line.ts';
import { forEachAppRun, type LineSink } from '../logs/logs.pipeline.ts';
import { type DrainTarget, type TargetOptions } from './drain-targets.ts';
import { type DrainsConfig, type DrainTransport } from './drain-transport.ts';
import { drainTransport, parsedTarget } from './drain-transports.ts';
import { type DrainRow } from './drains.store.ts';

export interface DispatcherDeps {
  /** <state>/drains: files of file-type drains. */
  dir: string;
  logger: Logger;
  /** logs.drains: the queue's bounds and back-off, and each transport's own options. */
  options: DrainsConfig;
  /** Current app name (APP-NAME of syslog messages follows renames). */
  appName: (appId: string) => string;
  /** HOSTNAME of syslog messages. */
  hostname: string;
}

interface Active {
  row: DrainRow;
  transport: DrainTransport;
  target: DrainTarget;
}

export function createDrainDispatcher(deps: DispatcherDeps) {
  const byApp = new Map<string, Map<string, Active>>();
  // Drains of addons, by addon id.
  const byAddon = new Map<string, Map<string, Active>>();

  function activate(row: DrainRow): Active {
    const { queueMaxLines, retryMinMs, retryMaxMs } = deps.options;
    const queue: TargetOptions = {
      queueMaxLines,
      retryMinMs,
      retryMaxMs,
      logger: deps.logger,
      label: `${row.type} ${row.id}`,
    };
    const transport = drainTransport(row.transport);
    const target = transport.open(parsedTarget(row, transport, fileOf(row.id)), queue, deps.options);
    return { row, transport, target };
  }

  function fileOf(id: string): string {
    return join(deps.dir, `${id}.log`);
  }

  function messages(a: Active, lines: StoredLine[], name: () => string): string[] {
    // The app name is looked up only when a transport's format reads it (syslog; a file line has none).
    const ctx = {
      hostname: deps.hostname,
      get appName() {
        return name();
      },
      token: a.row.token,
    };
    return lines.map((l) => a.transport.format(l, ctx));
  }

  function remove(row: DrainRow): void {
    const map = row.addon_id ? byAddon : byApp;
    const key = row.addon_id ?? row.app_id;
    const m = map.get(key);
    m?.get(row.id)?.target.close();
    m?.delete(row.id);
    if (m && !m.size) map.delete(key);
  }

  const sink: LineSink = {
    deliver(lines) {
      if (!byApp.size) return;
      forEachAppRun(lines, (appId, run) => {
        const drains = byApp.get(appId);
        if (!drains?.size) return;
        // Looked up only for syslog messages (a file line has no app name), once per batch.
        let appName: string | undefined;
        const name = () => (appName ??= deps.appName(appId));
        for (const a of drains.values()) a.target.enqueue(messages(a, run, name));
      });
    },
  };

  return {
    sink,
    fileOf,
    /** Lines of an addon's server to the addon's drains (APP-NAME: the app's name, as app lines). */
    deliverAddon(addonId: string, lines: StoredLine[]): void {
      const drains = byAddon.get(addonId);
      if (!drains?.size || !lines.length) return;
      const name = deps.appName(lines[0].app_id);
      for (const a of drains.values()) a.target.enqueue(messages(a, lines, () => name));
    },
    add(row: DrainRow): void {
      const map = row.addon_id ? byAddon : byApp;
      const key = row.addon_id ?? row.app_id;
      let m = map.get(key);
      if (!m) map.set(key, (m = new Map()));
      m.get(row.id)?.target.close();
      m.set(row.id, activate(row));
    },
    remove,
    /** Drops targets whose drain row is gone (app deleted: rows cascade). */
    prune(exists: (id: string) => boolean): void {
      for (const m of [...byApp.values(), ...byAddon.values()])
        for (const a of [...m.values()]) if (!exists(a.row.id)) remove(a.row);
    },
    stats: (drainId: string) => {
      for (const m of [...byApp.values(), ...byAddon.values()]) {
        const a = m.get(drainId);
        if (a) return a.target.stats;
      }
      return null;
    },
    stop(): void {
      for (const m of [...byApp.values(), ...byAddon.values()]) for (const a of m.values()) a.target.close();
      byApp.clear();
      byAddon.clear();
    },
  };
}

export type DrainDispatcher = ReturnType<typeof createDrainDispatcher>;
