import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { extract as tarExtract, pack as tarPack } from 'tar-stream';
import { docker } from './docker-cli.ts';

// Images of the machine's engine put into a registry (Debian's docker-registry on the loopback) under another name,
// as `docker tag` + `docker push` would, but with their layers uncompressed: `docker push` gzips every layer on one
// core (1.7 GB of stand-ins: 200 s of image-sources.test.ts's set-up at load 20), where a `docker save` stream goes
// to the registry as it is. An OCI manifest may name uncompressed layers (application/vnd.oci.image.layer.v1.tar);
// the engine that pulls them unpacks them as any other. Several images can also go as one: their layers stacked in
// order (as `COPY --from=<image> / /` of each over the first), with files of the caller's own on top, without a build.

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';

interface Blob {
  digest: string;
  size: number;
}

interface SavedImage {
  /** The image's config, as the engine has it (its JSON in `docker save`). */
  config: Record<string, unknown>;
  layers: Blob[];
}

/** One HTTP exchange with the registry; resolves with the status and headers, rejects on anything but `expect`. */
function registryCall(
  url: string,
  method: string,
  expect: number,
  body?: { stream: Readable; size: number; type?: string } | { bytes: Buffer; type: string },
): Promise<Record<string, string | string[] | undefined>> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (body) {
      headers['content-length'] = 'bytes' in body ? body.bytes.length : body.size;
      headers['content-type'] = body.type ?? 'application/octet-stream';
    }
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('error', reject);
      res.on('end', () =>
        res.statusCode === expect
          ? resolve(res.headers)
          : reject(new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 500)}`)),
      );
    });
    req.on('error', reject);
    if (!body) req.end();
    else if ('bytes' in body) req.end(body.bytes);
    else {
      body.stream.on('error', (err) => req.destroy(err));
      body.stream.pipe(req);
    }
  });
}

/** A blob into `repo` (monolithic upload: the digest is known beforehand; the registry checks it). */
async function putBlob(registry: string, repo: string, digest: string, body: Parameters<typeof registryCall>[3]) {
  const started = await registryCall(`http://${registry}/v2/${repo}/blobs/uploads/`, 'POST', 202);
  const location = new URL(String(started.location), `http://${registry}`);
  location.searchParams.set('digest', digest);
  await registryCall(location.href, 'PUT', 201, body);
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/**
 * `docker save <image>`, each layer sent to `repo` as it streams by (its digest is its diff id: uncompressed, the blob
 * is the layer itself); resolves with the image's config and its layers in order.
 */
async function uploadLayers(registry: string, repo: string, image: string): Promise<SavedImage> {
  const diffIds = JSON.parse(docker('image', 'inspect', '--format', '{{json .RootFS.Layers}}', image)) as string[];
  const save = spawn('docker', ['save', image], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  save.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((ok) => save.once('close', ok));
  const extract = tarExtract();
  const sizes = new Map<string, number>();
  const jsons = new Map<string, Buffer>();
  const uploads: Promise<void>[] = [];
  extract.on('entry', (header, stream, next) => {
    if (header.name.endsWith('/layer.tar')) {
      // Hashed as it goes to the registry: the digest given at the commit is checked by the registry against what came.
      const hash = createHash('sha256');
      const hashed = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      const size = header.size ?? 0;
      stream.on('end', next);
      stream.pipe(hashed);
      const done = (async () => {
        const started = await registryCall(`http://${registry}/v2/${repo}/blobs/uploads/`, 'POST', 202);
        const location = new URL(String(started.location), `http://${registry}`);
        const patched = await registryCall(location.href, 'PATCH', 202, { stream: hashed, size });
        const digest = `sha256:${hash.digest('hex')}`;
        const commit = new URL(String(patched.location), `http://${registry}`);
        commit.searchParams.set('digest', digest);
        await registryCall(commit.href, 'PUT', 201);
        sizes.set(digest, size);
      })();
      done.catch((err) => extract.destroy(err));
      uploads.push(done);
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (header.name.endsWith('.json')) jsons.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  const extracted = new Promise<void>((ok, fail) => {
    extract.on('finish', ok);
    extract.on('error', fail);
  });
  save.stdout.pipe(extract);
  await extracted;
  await Promise.all(uploads);
  const code = await exited;
  if (code !== 0) throw new Error(`docker save ${image} exited ${code}: ${stderr}`);
  const manifest = JSON.parse(String(jsons.get('manifest.json'))) as { Config: string }[];
  const config = JSON.parse(String(jsons.get(manifest[0]?.Config ?? ''))) as Record<string, unknown>;
  const layers = diffIds.map((digest) => {
    const size = sizes.get(digest);
    if (size === undefined) throw new Error(`docker save ${image} gave no layer ${digest}`);
    return { digest, size };
  });
  return { config, layers };
}

/** A layer of the caller's files (path → content), as a tar. */
function filesLayer(files: Record<string, Buffer>): Promise<Buffer> {
  const p = tarPack();
  for (const [name, content] of Object.entries(files)) p.entry({ name, mode: 0o644, uid: 0, gid: 0 }, content);
  p.finalize();
  const chunks: Buffer[] = [];
  return new Promise((ok, fail) => {
    p.on('data', (c) => chunks.push(c as Buffer));
    p.on('end', () => ok(Buffer.concat(chunks)));
    p.on('error', fail);
  });
}

/**
 * `images` as one image `<repo>:<tag>` of `registry`: the first image's config, the layers of every image in order,
 * then `files` (path in the image → content) as a last layer. Resolves with the manifest's digest (what a pull records).
 */
export async function uploadImage(
  registry: string,
  name: string,
  images: string[],
  files: Record<string, Buffer> = {},
): Promise<string> {
  const [repo, tag] = name.split(':');
  const saved = await Promise.all(images.map((image) => uploadLayers(registry, repo, image)));
  const layers = saved.flatMap((s) => s.layers);
  const config = saved[0]?.config ?? {};
  const history = [...((config.history as unknown[] | undefined) ?? [])];
  for (const image of images.slice(1)) history.push({ created_by: `the layers of ${image}` });
  if (Object.keys(files).length > 0) {
    const bytes = await filesLayer(files);
    const blob = { digest: sha256(bytes), size: bytes.length };
    await putBlob(registry, repo, blob.digest, { bytes, type: OCI_LAYER_TAR });
    layers.push(blob);
    history.push({ created_by: `files: ${Object.keys(files).join(', ')}` });
  }
  const configBytes = Buffer.from(
    JSON.stringify({ ...config, history, rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) } }),
  );
  const configDigest = sha256(configBytes);
  await putBlob(registry, repo, configDigest, { bytes: configBytes, type: OCI_CONFIG });
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: configDigest, size: configBytes.length },
      layers: layers.map((l) => ({ mediaType: OCI_LAYER_TAR, digest: l.digest, size: l.size })),
    }),
  );
  await registryCall(`http://${registry}/v2/${repo}/manifests/${tag}`, 'PUT', 201, {
    bytes: manifest,
    type: OCI_MANIFEST,
  });
  return sha256(manifest);
}
