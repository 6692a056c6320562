import { z } from 'zod';
import { dockerConfig, logsConfig, sourcesConfig } from './schema-sections.ts';

// The emulator's whole configuration. Sources, lowest precedence first:
// built-in defaults (this schema) < emulator.config.json (or --config) < EMULATOR_* env < CLI flags.

const port = z.number().int().min(0).max(65535);

export const userSchema = z.object({
  username: z.string().min(1),
  email: z.string().email(),
  password: z.string().min(1),
  fullname: z.string().default(''),
  /** Without a payment method the platform's free-trial limits apply (1 app, 1 small web container). */
  paymentMethod: z.boolean().default(true),
  /** Fixed API tokens accepted for this user (CI determinism). Stored hashed like any other. */
  apiTokens: z.array(z.string().min(16, 'an API token must be at least 16 characters')).default([]),
  /** SSH public keys (`ssh-ed25519 AAAA… comment` lines) registered for this user at every start (git push). */
  sshKeys: z.array(z.string().min(1).max(16_384)).max(100).default([]),
});

export const containerSizeSchema = z.object({
  id: z.string(),
  name: z.string(),
  human_name: z.string(),
  human_cpu: z.string(),
  memory: z.number().int().positive(),
  ordinal: z.number().int(),
  hourly_price: z.number().int(),
  thirtydays_price: z.number().int(),
  pids_limit: z.number().int(),
  swap: z.number().int(),
  sku: z.string(),
});

// The platform's documented catalogue (developers.scalingo.com container_sizes; docs/fidelity.md):
// ids, memory, CPU priority, ordinals and prices in cents. SKUs follow the `<region>-app-<NAME>` pattern.
const size = (id: string, ordinal: number, name: string, memory: number, cpu: string, hourly: number) => ({
  id,
  name,
  human_name: name,
  human_cpu: cpu,
  memory,
  ordinal,
  hourly_price: hourly,
  thirtydays_price: hourly * 72,
  pids_limit: 0,
  swap: 0,
  sku: `local-app-${name}`,
});

export const defaultContainerSizes = [
  size('01710ca1-5d40-45be-a038-7d029e05cb23', 2, 'S', 268435456, 'low CPU priority', 10),
  size('32629c23-4f69-42b8-b603-79849d1c2471', 3, 'M', 536870912, 'standard CPU priority', 20),
  size('c623c087-69c3-4104-8a40-6b5cd3d41cae', 4, 'L', 1073741824, 'standard CPU priority', 40),
  size('f6a6a2cb-aeba-433e-958d-3d3a74e6b065', 5, 'XL', 2147483648, 'high CPU priority', 80),
  size('30b895f6-4320-4299-ac10-61e42180f9f3', 6, '2XL', 4294967296, 'high CPU priority', 160),
];

export const DEFAULT_STACK_IMAGE = 'scalingo-emulator/stack-busybox:1';

export const configSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    /**
     * The host name the URLs the emulator hands out carry (API, attach, logs, sources, git) when clients cannot use
     * `host`: an emulator listening on 0.0.0.0 in a container is reached by its service name on a compose network.
     * Unset: `host`.
     */
    publicHost: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$|^\[[0-9A-Fa-f:.]+\]$/, 'expected a host name or an IP address')
      .optional(),
    /** One port for the API, the auth service and the logs service. 0 = any free port. */
    port: port.default(5100),
    /** The router serving http://<app>.localhost:<routerPort>. 0 = any free port. */
    routerPort: port.default(5180),
    /** The SSH git endpoint (git push / fetch of apps): ssh://git@<host>:<sshPort>/<app>.git. 0 = any free port. */
    sshPort: port.default(5122),
    /** Where the SQLite file and other state live. Relative to the working directory. */
    dataDir: z.string().default('.emulator-data'),
    inMemory: z.boolean().default(false),
    /** Token of the control plane (/_emulator/*); empty = a random `ad-…` token per start, printed like the API token. */
    adminToken: z.string().min(16, 'the admin token must be at least 16 characters').optional(),
    /** system: real time; manual: time moves only through POST /_emulator/clock/advance (tokens, URLs, alerts, timers…). */
    clock: z.enum(['system', 'manual']).default('system'),
    /** A snapshot file (GET /_emulator/snapshots/:id) whose state the emulator starts from (--import). */
    importFile: z.string().optional(),
    /** Where a snapshot of the state is written when the emulator stops (--export-on-exit). */
    exportOnExit: z.string().optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Check every API answer against its declared schema; a mismatch becomes a 500 (the test suite's conformance check). */
    validateResponses: z.boolean().default(false),
    region: z
      .object({
        name: z.string().default('local'),
        displayName: z.string().default('Local emulator'),
      })
      .prefault({}),
    auth: z
      .object({
        /** Lifetime of the bearer tokens given by POST /v1/tokens/exchange (platform: 1 hour). */
        bearerTtlSeconds: z.number().int().positive().default(3600),
      })
      .prefault({}),
    users: z
      .array(userSchema)
      .min(1, 'at least one user is needed')
      .default([
        {
          username: 'dev',
          email: 'dev@example.test',
          password: 'dev-password',
          fullname: 'Development User',
          paymentMethod: true,
          apiTokens: [],
          sshKeys: [],
        },
      ]),
    rateLimit: z
      .object({
        enabled: z.boolean().default(false),
        /** Requests per minute per token (the platform's is 60). */
        perMinute: z.number().int().positive().default(60),
      })
      .prefault({}),
    /** Largest request body accepted, in bytes. */
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    pagination: z
      .object({
        defaultPerPage: z.number().int().positive().default(30),
        maxPerPage: z.number().int().positive().default(100),
      })
      .prefault({}),
    containerSizes: z.array(containerSizeSchema).min(1).default(defaultContainerSizes),
    /** Stack id → Docker image the app's code runs on when it has no Dockerfile. */
    stacks: z.record(z.string(), z.string()).default({
      'scalingo-20': DEFAULT_STACK_IMAGE,
      'scalingo-22': DEFAULT_STACK_IMAGE,
      'scalingo-24': DEFAULT_STACK_IMAGE,
    }),
    defaultStack: z.string().default('scalingo-22'),
    /** Addons (issue #15): real PostgreSQL, MySQL and Redis servers in containers, or stand-ins. */
    addons: z
      .object({
        /** false: every addon is a stand-in (no server, no variables). */
        servers: z.boolean().default(true),
      })
      .prefault({}),
    /** Buildpack-like builds of Node/Python/Ruby code on Debian-based stack images (issue #15). */
    buildpacks: z
      .object({
        /** false: code without a Dockerfile always runs on the stack image with its Procfile (no dependency install). */
        enabled: z.boolean().default(true),
      })
      .prefault({}),
    /** Where the stack and addon server images come from when the engine lacks them (issue 36; docs/architecture.md "Images"). */
    images: z
      .object({
        /**
         * `auto`: the engine's registry (official images pulled by the engine, adapted by a local build), else the
         * Debian path (mmdebstrap and a Debian mirror); `registry` or `debian`: that way only.
         */
        source: z.enum(['auto', 'registry', 'debian']).default('auto'),
      })
      .prefault({}),
    /** What build steps may reach (issue 34). */
    builds: z
      .object({
        /**
         * The network of the build containers: `none` (offline: loopback only), `bridge` (the engine's default
         * bridge: the internet, as the platform's builds have it) or the name of a user-defined Docker network.
         * `host` is refused: build steps would reach everything on the host's loopback.
         */
        network: z
          .string()
          .regex(
            /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/,
            'must be "none", "bridge" or the name of a user-defined Docker network',
          )
          .refine((v) => v !== 'host', {
            message: '"host" is refused: build steps would reach the emulator and every port on the host\'s loopback',
          })
          .default('none'),
      })
      .prefault({}),
    /** Apps whose code is a local directory: created at start if missing, redeployed when a file changes. */
    apps: z
      .array(
        z.object({
          name: z.string().min(1),
          dir: z.string().min(1),
          /** Username or e-mail of the owner (default: the first user). */
          owner: z.string().optional(),
          stack: z.string().optional(),
        }),
      )
      .default([]),
    docker: dockerConfig,
    logs: logsConfig,
    /** Container stats sampling (intervals.statsSampleMs) and the metrics built from it. */
    stats: z
      .object({
        /** Samples and router records older than this are deleted (the platform shows up to 72 h). */
        retentionHours: z.number().positive().default(72),
        /** At most this many points per time series: points are means over buckets of (since / maxPoints). */
        maxPoints: z.number().int().positive().default(200),
        /** Containers whose stats are read from the engine at the same time. */
        concurrency: z.number().int().positive().default(8),
      })
      .prefault({}),
    /** Delivery of notifications to webhook notifiers. */
    notifiers: z
      .object({
        webhookTimeoutMs: z.number().int().positive().default(5000),
        /** Further attempts after a failed one (network error, 429 or 5xx), with doubling back-off. */
        webhookRetries: z.number().int().nonnegative().default(3),
        webhookBackoffMs: z.number().int().positive().default(1000),
      })
      .prefault({}),
    /** One-off containers (run): the platform's limits and the upload size cap. */
    oneOff: z
      .object({
        /** Largest file accepted by POST <attach_url>/files. */
        uploadMaxBytes: z
          .number()
          .int()
          .positive()
          .default(50 * 1024 * 1024),
        /** The platform allows 10 one-off containers per app and 50 per account at once. */
        maxPerApp: z.number().int().positive().default(10),
        maxPerAccount: z.number().int().positive().default(50),
      })
      .prefault({}),
    /** The SSH git endpoint's bounds (docs/fidelity.md "Keys and git push"). */
    git: z
      .object({
        /** Connections open at once, all users together. */
        maxConnections: z.number().int().positive().default(64),
        /** git commands (push, fetch) running at once per SSH key. */
        maxSessionsPerKey: z.number().int().positive().default(4),
        /** A connection must authenticate within this time. */
        authTimeoutMs: z.number().int().positive().default(20_000),
        /** Longest git command, build included (the platform stops a deployment after 30 minutes). */
        sessionTimeoutMs: z
          .number()
          .int()
          .positive()
          .default(35 * 60_000),
      })
      .prefault({}),
    /** Scalingo Scheduler: cron.json jobs as detached one-offs (doc.scalingo.com/platform/app/task-scheduling/scalingo-scheduler). */
    cron: z
      .object({
        /** Jobs per cron.json (platform: 5). */
        maxJobs: z.number().int().positive().default(5),
        /** Smallest interval between two runs of a job, in minutes (platform: 10); 0 lifts the floor. */
        minIntervalMinutes: z.number().nonnegative().default(10),
        /** A scheduled one-off is stopped after min(this, its interval) (platform: 15 minutes). */
        maxRunMinutes: z.number().positive().default(15),
        /** Read 6-field expressions (seconds first) instead of 5: short schedules for tests and demos. */
        secondsField: z.boolean().default(false),
        /** How often the schedules are checked against the apps (deployments also trigger a check). */
        syncMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
    /** Autoscalers (doc.scalingo.com/platform/app/autoscaler): decisions follow each stats round. */
    autoscalers: z
      .object({
        /** Consecutive stats rounds beyond the target before a scale (the platform: two per-minute means). */
        consecutiveRounds: z.number().int().positive().default(2),
        /** No scale out within this time after a scale (platform: 1 minute). */
        scaleUpCooldownMs: z.number().int().nonnegative().default(60_000),
        /** No scale in within this time after a scale (platform: 3 minutes). */
        scaleDownCooldownMs: z.number().int().nonnegative().default(180_000),
      })
      .prefault({}),
    sources: sourcesConfig,
    /** Intervals and durations used by the runtime parts, in milliseconds. */
    intervals: z
      .object({
        operationPollMs: z.number().int().positive().default(500),
        statsSampleMs: z.number().int().positive().default(60_000),
        logsPingMs: z.number().int().positive().default(20_000),
        oneOffIdleMs: z
          .number()
          .int()
          .positive()
          .default(30 * 60_000),
        /** An attach URL can be used (attach, uploads) this long after the run that issued it. */
        attachUrlTtlMs: z
          .number()
          .int()
          .positive()
          .default(60 * 60_000),
        watchDebounceMs: z.number().int().positive().default(500),
        /** A web container must answer HTTP on $PORT within this time (the platform gives 60 s). */
        bootTimeoutMs: z.number().int().positive().default(60_000),
        /** Other containers must still run this long after they start. */
        bootGraceMs: z.number().int().nonnegative().default(1000),
        /** SIGTERM → SIGKILL grace when containers stop. */
        stopGraceSeconds: z.number().int().nonnegative().default(10),
        /** Restart back-off after a crash: base × 2^(n-1), capped. */
        crashBackoffMs: z.number().int().positive().default(1000),
        crashBackoffMaxMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    if (!(cfg.defaultStack in cfg.stacks)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultStack'],
        message: `must be one of the stacks (${Object.keys(cfg.stacks).join(', ')})`,
      });
    }
    const names = new Set<string>();
    cfg.users.forEach((u, i) => {
      for (const key of [u.username, u.email]) {
        if (names.has(key))
          ctx.addIssue({ code: 'custom', path: ['users', i], message: `"${key}" is used by two users` });
        names.add(key);
      }
    });
  });

export type EmulatorConfig = z.infer<typeof configSchema>;

/** The host part of the emulator's URLs: publicHost, else the listening host (an IPv6 one in brackets). */
export function urlHostOf(config: Pick<EmulatorConfig, 'host' | 'publicHost'>): string {
  if (config.publicHost) return config.publicHost;
  return config.host.includes(':') ? `[${config.host}]` : config.host;
}
export type ConfigInput = z.input<typeof configSchema>;
export type ContainerSize = z.infer<typeof containerSizeSchema>;
export type UserConfig = z.infer<typeof userSchema>;
