// Sections of the emulator's configuration schema (src/config/schema.ts), each with its defaults: the engine, the
// logs service, the limits on deployment sources.
import { z } from 'zod';

/**
 * The container engine (docs/architecture.md "Runtime"). Which one: docker.host, else docker.socketPath,
 * else Docker's own DOCKER_HOST / DOCKER_TLS_VERIFY / DOCKER_CERT_PATH, else the current docker context,
 * else Docker Desktop's ~/.docker/run/docker.sock, else /var/run/docker.sock (engine-context.ts).
 */
export const dockerConfig = z
  .object({
    /** Docker socket; empty = DOCKER_HOST, else the docker context, else ~/.docker/run/docker.sock, else /var/run/docker.sock. */
    socketPath: z.string().default(''),
    /** DOCKER_HOST-style address: `unix:///var/run/docker.sock` or `tcp://host:2376` (TLS; plain TCP only on loopback). */
    host: z
      .string()
      .regex(
        /^(unix:\/\/\/.*|unix:\/\/|tcp:\/\/[^\s/]+\/?)$/,
        'expected unix:///path/to/docker.sock or tcp://host:port',
      )
      .optional(),
    /** TLS for a tcp:// engine (dockerd --tlsverify): the CA that signed the engine's certificate and the client's pair. */
    tls: z
      .object({
        /** A directory with ca.pem, cert.pem and key.pem (DOCKER_CERT_PATH layout); single files below override it. */
        certPath: z.string().min(1).optional(),
        ca: z.string().min(1).optional(),
        cert: z.string().min(1).optional(),
        key: z.string().min(1).optional(),
      })
      .strict()
      .refine((t) => t.certPath || (t.ca && t.cert && t.key), 'give certPath, or all of ca, cert and key')
      .optional(),
    /** IP address the containers' ports are published on, and where the router, readiness and db-tunnels reach them. */
    publishHost: z
      .union([z.ipv4(), z.ipv6()], { error: "expected an IP address (the engine machine's, e.g. 127.0.0.1)" })
      .default('127.0.0.1'),
    /**
     * The emulator runs in a container attached to this user-defined network (the image in a compose project, a CI
     * service): every container it reaches (web and tcp containers, addon servers) joins it too and is reached at its
     * alias there, nothing is published on publishHost (src/runtime/reach.ts). Unset: ports published on publishHost.
     */
    network: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'must be the name of a user-defined Docker network')
      .refine((v) => !['host', 'bridge', 'none', 'default'].includes(v), {
        message: 'must be a user-defined Docker network (containers are reached there by their aliases)',
      })
      .optional(),
    /**
     * `local`: containers on the engine above. `swarm`: that engine is a Docker Swarm manager and app and addon
     * containers are services placed on any node (src/runtime/swarm-runtime.ts; docs/architecture.md "Swarm").
     */
    mode: z.enum(['local', 'swarm']).default('local'),
    /** docker.mode "swarm": the node (hostname or id) that runs attached one-offs; default the manager (builds always run there). */
    swarm: z
      .object({ oneOffNode: z.string().min(1).optional() })
      .strict()
      .prefault({}),
    /** Stop the app containers when the emulator stops (otherwise they keep running and are reconciled at next start). */
    stopContainersOnExit: z.boolean().default(false),
  })
  // A swarm's services publish host-mode ports behind doors on publishHost (swarm-forward.ts): no alias to reach.
  .refine((d) => !(d.mode === 'swarm' && d.network), {
    message: 'docker.network is not supported with docker.mode "swarm" (its services are reached through publishHost)',
    path: ['network'],
  })
  .prefault({});

/** Logs service, history, archives and drains (issue #5; docs/fidelity.md "Logs"). */
export const logsConfig = z
  .object({
    /** Lines returned by the text endpoint when `n` is missing (the official CLI's default is 20). */
    defaultLines: z.number().int().positive().default(20),
    /** Largest `n` served (bounded by the history anyway). */
    maxLines: z.number().int().positive().default(10_000),
    /** History kept in SQLite per app; older lines rotate into gzip archives. */
    historyMaxLines: z.number().int().positive().default(10_000),
    historyMaxBytes: z
      .number()
      .int()
      .positive()
      .default(5 * 1024 * 1024),
    historyMaxAgeMs: z
      .number()
      .int()
      .positive()
      .default(24 * 3600_000),
    /** Archives kept per app (oldest files deleted past this). */
    archivesMaxPerApp: z.number().int().positive().default(100),
    archivesPerPage: z.number().int().positive().default(10),
    /** Validity of a `logs_url` (checked when a request or stream starts). */
    urlTtlMs: z
      .number()
      .int()
      .positive()
      .default(24 * 3600_000),
    /** Validity of an archive download URL (platform: 60 minutes). */
    archiveUrlTtlMs: z
      .number()
      .int()
      .positive()
      .default(60 * 60_000),
    /** How often rotation and retention run. */
    maintenanceMs: z.number().int().positive().default(10_000),
    /** Lines waiting to be stored; collection pauses (Docker keeps the backlog) when full. */
    queueMaxLines: z.number().int().positive().default(20_000),
    /** Lines per SQLite transaction. */
    batchMaxLines: z.number().int().positive().default(2_000),
    /** Lines buffered per live subscriber (WebSocket/SSE) before it is cut as too slow. */
    subscriberMaxLines: z.number().int().positive().default(10_000),
    drains: z
      .object({
        /** network: syslog-type drains send RFC 5424 to host:port; file: every drain writes to <data>/drains/<id>.log. */
        mode: z.enum(['network', 'file']).default('network'),
        /** Lines buffered per drain while its target is unreachable (oldest dropped past this, counted). */
        queueMaxLines: z.number().int().positive().default(10_000),
        retryMinMs: z.number().int().positive().default(200),
        retryMaxMs: z.number().int().positive().default(30_000),
        /** Verify TLS certificates of tcp+tls syslog targets. */
        tlsRejectUnauthorized: z.boolean().default(true),
      })
      .prefault({}),
  })
  .prefault({});

/** Limits on deployment sources (archives, git_source), enforced while reading (docs/fidelity.md "Hardening"). */
export const sourcesConfig = z
  .object({
    /** Bytes of an archive as received (or of a git clone on disk). */
    maxArchiveBytes: z
      .number()
      .int()
      .positive()
      .default(512 * 1024 * 1024),
    /** Bytes once decompressed (the platform's images are at most 1.5 GB). */
    maxExpandedBytes: z
      .number()
      .int()
      .positive()
      .default(1536 * 1024 * 1024),
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .default(512 * 1024 * 1024),
    maxEntries: z.number().int().positive().default(100_000),
    /** Fetching and extracting (or cloning) together. */
    timeoutMs: z.number().int().positive().default(300_000),
    /** Build output kept per deployment; past it only the step and error lines are kept. */
    maxOutputBytes: z
      .number()
      .int()
      .positive()
      .default(2 * 1024 * 1024),
    /** Uploaded sources (POST /v1/sources, `scalingo deploy <archive>`; capped by maxArchiveBytes): URLs and the stored
     * archive live this long (10 min, as on the platform), and expired ones are looked for this often. */
    uploadTtlMs: z
      .number()
      .int()
      .positive()
      .default(10 * 60_000),
    uploadSweepMs: z.number().int().positive().default(60_000),
  })
  .prefault({});
