// How the swarm runtime (swarm-runtime.ts) maps a ContainerSpec onto a Swarm service, and a service
// and its newest task back onto a ContainerInfo. One service per container (`<app>-<type>-<index>`
// names, one replica): the emulator addresses containers one by one (ps ids, restarts, one-offs,
// crash events), so a service per container keeps every ContainerRuntime call a call on one thing
// (docs/architecture.md "Swarm").
import { createHash } from 'node:crypto';
import { volumeLabelsFor } from './ownership.ts';
import { type ContainerInfo, type ContainerSpec, LABELS } from './runtime.ts';

/** Labels only the swarm runtime sets on its services. */
export const SWARM_LABELS = {
  /** The ContainerSpec name when the service name had to be shortened (Swarm: 63 characters). */
  name: 'io.scalingo-emulator.swarm.name',
  /** The image tag the spec named (the service runs it by image id: nodes never pull). */
  image: 'io.scalingo-emulator.swarm.image',
  /** Memory limit changed in place by updateMemory (the task template keeps the first one). */
  memory: 'io.scalingo-emulator.swarm.memory',
  /** Engine address of a node (a node label the operator sets: `docker node update --label-add`). */
  engine: 'io.scalingo-emulator.engine',
} as const;

/** Labels Swarm puts on the container of a task. */
export const TASK_LABELS = {
  serviceId: 'com.docker.swarm.service.id',
  taskId: 'com.docker.swarm.task.id',
  nodeId: 'com.docker.swarm.node.id',
} as const;

export interface SwarmTask {
  ID: string;
  ServiceID: string;
  NodeID?: string;
  CreatedAt: string;
  DesiredState: string;
  Version?: { Index: number };
  Status: {
    Timestamp?: string;
    State: string;
    Err?: string;
    Message?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
    PortStatus?: { Ports?: { TargetPort: number; PublishedPort?: number }[] };
  };
}

export interface SwarmService {
  ID: string;
  Version: { Index: number };
  Spec: ServiceSpec;
}

export interface ServiceSpec {
  Name: string;
  Labels: Record<string, string>;
  TaskTemplate: {
    ContainerSpec: Record<string, unknown>;
    Resources?: { Limits?: { MemoryBytes?: number } };
    RestartPolicy?: { Condition: string };
    Placement?: { Constraints?: string[] };
    Networks?: { Target: string; Aliases?: string[] }[];
    ForceUpdate?: number;
  };
  Mode: { Replicated?: { Replicas: number } };
  EndpointSpec?: {
    Mode: string;
    Ports?: { Protocol: string; TargetPort: number; PublishedPort?: number; PublishMode: string }[];
  };
}

const MAX_SERVICE_NAME = 63;

/** A valid service name for a container name: shortened with a hash when Swarm's limit is exceeded. */
export function serviceName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9-]/g, '-');
  if (clean.length <= MAX_SERVICE_NAME) return clean;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX_SERVICE_NAME - 9).replace(/-+$/, '')}-${hash}`;
}

/**
 * `source:target[:ro]` binds as service mounts: a path is a bind mount (on the task's node), a name a volume,
 * made with the service's ownership labels when the node does not have it yet.
 */
function mountsOf(binds: string[], labels: Record<string, string>): Record<string, unknown>[] {
  return binds.map((b) => {
    const [source, target, mode] = b.split(':');
    const volume = !source.startsWith('/');
    return {
      Type: volume ? 'volume' : 'bind',
      Source: source,
      Target: target,
      ReadOnly: mode === 'ro',
      ...(volume ? { VolumeOptions: { Labels: volumeLabelsFor(labels) } } : {}),
    };
  });
}

export function serviceSpec(
  spec: ContainerSpec,
  imageId: string,
  o: { replicas: number; constraints: string[]; publishedPort?: number },
): ServiceSpec {
  const labels = { ...spec.labels, [LABELS.managed]: '1' };
  const name = serviceName(spec.name);
  return {
    Name: name,
    Labels: {
      ...labels,
      [SWARM_LABELS.image]: spec.image,
      ...(name !== spec.name ? { [SWARM_LABELS.name]: spec.name } : {}),
    },
    TaskTemplate: {
      ContainerSpec: {
        Image: imageId,
        Args: spec.cmd?.length ? spec.cmd : undefined,
        Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
        // On the task's container too: engine events carry them (crash detection, log following).
        Labels: labels,
        Dir: spec.workingDir,
        User: spec.user,
        TTY: spec.tty ?? false,
        OpenStdin: spec.openStdin ?? false,
        Init: true,
        Mounts: spec.binds?.length ? mountsOf(spec.binds, labels) : undefined,
      },
      Resources: { Limits: { MemoryBytes: spec.memoryBytes } },
      // The emulator restarts crashed containers itself (with the platform's back-off), as on one engine.
      RestartPolicy: { Condition: 'none' },
      Placement: { Constraints: o.constraints },
      Networks: spec.network ? [{ Target: spec.network, Aliases: spec.networkAliases ?? [] }] : [],
    },
    Mode: { Replicated: { Replicas: o.replicas } },
    // dnsrr: no virtual IP (IPVS), which kernels without ip_vs lack; host-mode ports for the same reason
    // (the routing mesh needs IPVS): each task publishes its port on the node that runs it.
    EndpointSpec: {
      Mode: 'dnsrr',
      Ports: spec.publishPort
        ? [{ Protocol: 'tcp', TargetPort: spec.publishPort, PublishedPort: o.publishedPort, PublishMode: 'host' }]
        : [],
    },
  };
}

/** The task that stands for the container now: the newest one. */
export function newestTask(tasks: SwarmTask[]): SwarmTask | null {
  let best: SwarmTask | null = null;
  for (const t of tasks) if (!best || Date.parse(t.CreatedAt) > Date.parse(best.CreatedAt)) best = t;
  return best;
}

const NOT_YET_RUNNING = new Set([
  'new',
  'allocated',
  'pending',
  'assigned',
  'accepted',
  'preparing',
  'ready',
  'starting',
]);

/** Docker-like state of a task: created before it runs, running, exited after. */
export function taskState(t: SwarmTask | null): string {
  if (!t || NOT_YET_RUNNING.has(t.Status.State)) return 'created';
  return t.Status.State === 'running' ? 'running' : 'exited';
}

/** Host port the task published, on the node that runs it. */
export function taskPort(t: SwarmTask): number | null {
  const p = t.Status.PortStatus?.Ports?.find((x) => x.PublishedPort);
  return p?.PublishedPort ?? null;
}

/** The ContainerInfo of a service from its spec and its newest task, when the task's container cannot be inspected. */
export function serviceInfo(s: SwarmService, t: SwarmTask | null): ContainerInfo {
  const state = taskState(t);
  const at = t?.Status.Timestamp ? Date.parse(t.Status.Timestamp) : null;
  return {
    engineId: s.ID,
    name: s.Spec.Labels[SWARM_LABELS.name] ?? s.Spec.Name,
    labels: s.Spec.Labels,
    state,
    exitCode: state === 'exited' ? (t?.Status.ContainerStatus?.ExitCode ?? -1) : null,
    hostPort: null,
    address: null,
    startedAt: state === 'running' ? at : null,
    finishedAt: state === 'exited' ? at : null,
    memoryLimit: memoryOf(s),
    oomKilled: false,
  };
}

export function memoryOf(s: SwarmService): number {
  return Number(s.Spec.Labels[SWARM_LABELS.memory] ?? s.Spec.TaskTemplate.Resources?.Limits?.MemoryBytes ?? 0);
}

/** Service ids are 25 base-36 characters; container ids 64 hex digits. */
export const isContainerId = (id: string) => /^[0-9a-f]{64}$/.test(id);
