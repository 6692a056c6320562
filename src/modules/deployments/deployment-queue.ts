// Deployments of one app waiting for the running one, first in first out, as the platform queues a
// deployment that cannot start yet. Bounded per app: past `max`, the caller refuses the deployment.
import { type UserRow } from '../auth/principal.ts';
import { type DeploymentRow } from './deployments.store.ts';
import { type Source } from './sources.ts';

export interface QueuedDeployment {
  row: DeploymentRow;
  source: Source;
  pusher: UserRow | null;
}

export class DeploymentQueue {
  private readonly lines = new Map<string, QueuedDeployment[]>();

  constructor(readonly max: number) {}

  isFull(appId: string): boolean {
    return (this.lines.get(appId)?.length ?? 0) >= this.max;
  }

  push(appId: string, item: QueuedDeployment): void {
    const line = this.lines.get(appId);
    if (line) line.push(item);
    else this.lines.set(appId, [item]);
  }

  /** The next deployment of the app, removed from its line. */
  next(appId: string): QueuedDeployment | undefined {
    const line = this.lines.get(appId);
    const item = line?.shift();
    if (line && !line.length) this.lines.delete(appId);
    return item;
  }

  /** Every deployment still waiting for the app, removed (the app is gone). */
  drop(appId: string): QueuedDeployment[] {
    const line = this.lines.get(appId) ?? [];
    this.lines.delete(appId);
    return line;
  }
}
