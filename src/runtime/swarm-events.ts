// Events of the swarm runtime: the engine events of every node (task containers and plain ones), told as
// the runtime's containers see them. A task container's events speak of its service (the engineId the
// emulator knows); those of an older task, or of a task Swarm is moving off a drained or lost node, are
// not the app's (its container lives on, elsewhere). A watch of the nodes (every `watchMs`) subscribes to
// nodes that joined and gives a new task to the services of a node drained or lost (swarm-tasks.ts).
import { type ContainerRuntime, LABELS, type RuntimeEvent } from './runtime.ts';
import { type SwarmNodes } from './swarm-nodes.ts';
import { newestTask, TASK_LABELS } from './swarm-services.ts';
import { type SwarmTasks } from './swarm-tasks.ts';

export function createSwarmEvents(o: {
  manager: ContainerRuntime;
  nodes: SwarmNodes;
  tasks: SwarmTasks;
  onTaskChange: (serviceId: string) => void;
  watchMs: number;
}) {
  const { nodes, tasks } = o;
  const listeners = new Set<(e: RuntimeEvent) => void>();
  const subscribed = new Map<ContainerRuntime, () => void>();
  const rescheduled = new Set<string>();
  let watch: NodeJS.Timeout | null = null;
  // Events are relayed one after the other (each may ask the manager about its task): their order is kept.
  let relaying: Promise<void> = Promise.resolve();

  async function relay(e: RuntimeEvent): Promise<void> {
    const serviceId = e.labels[TASK_LABELS.serviceId];
    let out = e;
    if (serviceId) {
      const s = await tasks.service(serviceId).catch(() => null);
      if (s) {
        const newest = newestTask(await tasks.tasks(serviceId).catch(() => []));
        if (newest && newest.ID !== e.labels[TASK_LABELS.taskId]) return; // an older task of the service
        const node = (await nodes.refresh().catch(() => nodes.list)).find((n) => n.id === e.labels[TASK_LABELS.nodeId]);
        if (e.action !== 'start' && node && (node.availability !== 'active' || node.state !== 'ready'))
          return void checkNodes().catch(() => undefined);
      }
      o.onTaskChange(serviceId);
      out = { ...e, engineId: serviceId };
    }
    for (const l of listeners) l(out);
  }

  async function subscribeAll(): Promise<void> {
    for (const engine of [o.manager, ...(await nodes.otherEngines())]) {
      if (!subscribed.has(engine))
        subscribed.set(
          engine,
          engine.onEvent((e) => void (relaying = relaying.then(() => relay(e)).catch(() => undefined))),
        );
    }
  }

  async function checkNodes(): Promise<void> {
    await nodes.refresh();
    await subscribeAll();
    await tasks.reschedule(`${LABELS.managed}=1`, rescheduled);
  }

  return {
    onEvent(listener: (e: RuntimeEvent) => void): () => void {
      listeners.add(listener);
      void subscribeAll().catch(() => undefined);
      watch ??= setInterval(() => void checkNodes().catch(() => undefined), o.watchMs);
      watch.unref();
      return () => void listeners.delete(listener);
    },
    close(): void {
      if (watch) clearInterval(watch);
      for (const off of subscribed.values()) off();
      subscribed.clear();
      listeners.clear();
    },
  };
}
