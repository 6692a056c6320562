// `docker pull` through the engine: the engine's own registry configuration decides where the image comes
// from (Docker Hub, or the mirrors of its daemon.json `registry-mirrors`, Docker Desktop's Settings → Docker
// Engine). The emulator only names the image and records the digest the engine got.
import type Docker from 'dockerode';

/** What a pull gave: the content-addressed name (`debian@sha256:…`), or the image id when the engine has no repo digest. */
export interface PulledImage {
  digest: string;
}

export async function pullImage(docker: Docker, ref: string, onLine?: (line: string) => void): Promise<PulledImage> {
  const stream = (await docker.pull(ref)) as NodeJS.ReadableStream;
  await followPull(docker, stream, onLine);
  const image = await docker.getImage(ref).inspect();
  const repo = repository(ref);
  const digest = (image.RepoDigests ?? []).find((d) => repository(d) === repo) ?? image.Id;
  return { digest };
}

/** `postgres:15` → `postgres`, `debian@sha256:…` → `debian`, `host:5000/x:1` → `host:5000/x`. */
function repository(ref: string): string {
  const at = ref.indexOf('@');
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}

interface PullEvent {
  status?: string;
  id?: string;
  progress?: string;
  error?: string;
}

/** Waits for the pull; the layer steps (not their byte counts) go to onLine; an error event rejects with its text. */
function followPull(docker: Docker, stream: NodeJS.ReadableStream, onLine?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, events: PullEvent[]) => {
        const failed = events?.find((e) => e.error);
        if (err) reject(err);
        else if (failed?.error) reject(new Error(failed.error));
        else resolve();
      },
      (e: PullEvent) => {
        if (!onLine || e.progress || !e.status || e.status === 'Waiting') return;
        onLine(e.id ? `${e.id}: ${e.status}` : e.status);
      },
    );
  });
}
