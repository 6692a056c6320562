// The Docker runtime's engine events: one subscription to the engine's container events (of this
// emulator's containers), shared by every listener, resumed after a cut or an engine outage without
// delivering an event twice (event-replay.ts).

import { type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { lineSplitter } from './engine-parse.ts';
import { type EngineStateTracker } from './engine-state.ts';
import { createEventReplay } from './event-replay.ts';
import { type ContainerRuntime, LABELS, type RuntimeEvent } from './runtime.ts';

export function dockerEvents(
  engine: () => Promise<Docker>,
  health: EngineStateTracker,
): Pick<ContainerRuntime, 'onEvent'> & { close(): void } {
  const listeners = new Set<(e: RuntimeEvent) => void>();
  let eventStream: (Readable & { destroy(): void }) | null = null;
  let closed = false;
  // Back up: the events subscription resumes at once (from the last event seen).
  health.onChange((s) => {
    if (s === 'up' && listeners.size) void startEvents();
  });
  // What was delivered: a resumed subscription asks the engine for events since shortly before the newest
  // one seen and skips those already delivered (event-replay.ts).
  const replay = createEventReplay();
  let subscribedAtNs = 0;

  let starting = false;
  async function startEvents(): Promise<void> {
    if (eventStream || closed || starting) return;
    starting = true;
    const docker = await engine();
    starting = false;
    if (eventStream || closed) return;
    // Resumed: from the newest event seen, or from when the first subscription began (events of an outage are replayed).
    const from = replay.resumeFromNs() || subscribedAtNs;
    const since = from ? (from / 1e9).toFixed(9) : undefined;
    // `since` is "<seconds>.<nanoseconds>", a string for nanosecond precision (the engine's API);
    // @types/dockerode only knows a number of seconds. docker-modem serialises the filters object.
    const query: Omit<Docker.GetEventsOptions, 'since'> & { since?: string } = {
      since,
      filters: { type: ['container'], label: [`${LABELS.managed}=1`] },
    };
    docker.getEvents(query as Docker.GetEventsOptions, (err, stream) => {
      if (err || !stream) {
        health.noteError(err);
        // While the engine is down its return restarts the subscription; otherwise retry.
        if (!closed && health.state !== 'down') setTimeout(() => void startEvents(), 1000).unref();
        return;
      }
      health.noteOk();
      subscribedAtNs ||= Date.now() * 1e6;
      eventStream = stream as Readable & { destroy(): void };
      const split = lineSplitter((bytes, start, end) => {
        const e = runtimeEventOf(bytes.toString('utf8', start, end));
        if (!e) return;
        if (e.timeNano && !replay.fresh(e.key, e.timeNano)) return;
        for (const l of listeners) l(e.event);
      });
      stream.on('data', (c: Buffer) => split.write(c));
      stream.on('error', () => undefined);
      stream.on('close', () => {
        eventStream = null;
        if (closed) return;
        health.suspect();
        if (listeners.size) setTimeout(() => void (health.state !== 'down' && startEvents()), 500).unref();
      });
    });
  }

  return {
    onEvent(listener) {
      listeners.add(listener);
      void startEvents();
      return () => {
        listeners.delete(listener);
      };
    },
    close() {
      closed = true;
      listeners.clear();
      eventStream?.destroy();
      eventStream = null;
    },
  };
}

const ACTIONS = new Set(['start', 'die', 'oom', 'destroy', 'stop']);

/**
 * One line of the engine's event stream as a RuntimeEvent, when it is one the runtime passes on; `key` and
 * `timeNano` tell a replayed event from a new one (event-replay.ts).
 */
export function runtimeEventOf(line: string): { event: RuntimeEvent; key: string; timeNano?: number } | null {
  if (!line.trim()) return null;
  let e: {
    Action: string;
    Actor?: { ID: string; Attributes?: Record<string, string> };
    timeNano?: number;
    time?: number;
  };
  try {
    e = JSON.parse(line);
  } catch {
    return null;
  }
  const action = e.Action?.split(':')[0];
  if (!ACTIONS.has(action)) return null;
  const attrs = e.Actor?.Attributes ?? {};
  const exit = attrs.exitCode !== undefined ? Number(attrs.exitCode) : null;
  const event: RuntimeEvent = {
    engineId: e.Actor?.ID ?? '',
    action: action as RuntimeEvent['action'],
    exitCode: exit,
    labels: attrs,
    time: e.timeNano ? Math.floor(e.timeNano / 1e6) : Date.now(),
  };
  return { event, key: `${event.engineId}/${e.Action}`, timeNano: e.timeNano };
}
