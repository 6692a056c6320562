// scalingo.json, the platform's app manifest (developers.scalingo.com/scalingo-json-schema and its
// scalingo.schema.json), as `up` reads it: env (value, generators secret/url/template, required),
// addons ("provider:plan", options.version), formation (amount and size per type), stack and
// scripts.first-deploy. Every mistake is one line naming the field (docs/fidelity.md, "up").

import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { UpError } from './up-error.ts';

/** Bigger than any real manifest; a larger file is a mistake, refused before it is parsed. */
export const MANIFEST_MAX_BYTES = 256 * 1024;

const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const envEntry = z
  .object({
    description: z.string().max(2000).optional(),
    value: z
      .string()
      .max(64 * 1024)
      .nullable()
      .optional(),
    generator: z.enum(['secret', 'url', 'template']).optional(),
    template: z.string().max(4096).optional(),
    required: bool.optional(),
  })
  .strict()
  .refine((e) => !(e.generator && e.value != null), { message: 'takes a value or a generator, not both' })
  .refine((e) => e.generator !== 'template' || e.template !== undefined, {
    message: 'the template generator needs a template',
  });

const manifestSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().max(200).optional(),
    description: z.string().optional(),
    website: z.string().optional(),
    logo: z.string().optional(),
    repository: z.string().optional(),
    ref: z.string().optional(),
    stack: z.string().max(100).optional(),
    copy_parent_database_urls: bool.optional(),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,254}$/, 'is not a valid variable name'), envEntry)
      .optional(),
    addons: z
      .array(
        z.union([
          z.string().transform((plan) => ({ plan, options: undefined as { version?: string } | undefined })),
          z
            .object({
              plan: z.string(),
              options: z
                .object({ version: z.string().max(50).optional() })
                .passthrough()
                .optional(),
            })
            .strict(),
        ]),
      )
      .max(20)
      .optional(),
    formation: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/i, 'is not a process type'),
        z.object({ amount: z.number().int().min(0).max(100), size: z.string().max(10).optional() }).strict(),
      )
      .optional(),
    scripts: z
      .object({ 'first-deploy': z.string().max(4096).optional(), postdeploy: z.string().max(4096).optional() })
      .strict()
      .optional(),
  })
  .strict();

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestEnv = NonNullable<Manifest['env']>;

/** Parses scalingo.json; throws UpError with the line and column of a JSON mistake, or the field of a schema one. */
export function parseManifest(text: string, file = 'scalingo.json'): Manifest {
  if (Buffer.byteLength(text) > MANIFEST_MAX_BYTES)
    throw new UpError(`${file}: larger than ${MANIFEST_MAX_BYTES / 1024} KB`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UpError(`${file}: invalid JSON ${jsonPosition(text, (err as Error).message)}`);
  }
  const parsed = manifestSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    const what =
      issue.code === 'unrecognized_keys'
        ? `has an unknown field (${issue.keys.join(', ')})`
        : issue.code === 'invalid_key'
          ? 'is not a valid name'
          : issue.message;
    throw new UpError(`${file}: ${where} ${what}`);
  }
  return parsed.data;
}

/** "at line L column C: <what JSON.parse said>", from the position V8 reports. */
function jsonPosition(text: string, message: string): string {
  const m = /position (\d+)/.exec(message);
  const what = message
    .replace(/^JSON\.parse: /, '')
    .replace(/ in JSON at position \d+.*$/, '')
    .replace(/, ".*$/s, '');
  if (!m) return `(${what})`;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `at line ${line} column ${column}: ${what}`;
}

/** What the generators substitute (%URL%, %APP%; %PARENT_APP% and %PR_NUMBER% are empty outside review apps). */
export interface EnvContext {
  app: string;
  url: string;
  /** The app's variables already set: a generated value is made once and then kept. */
  existing: Record<string, string>;
  /** Where a `required` variable without a value is taken from (the shell running `up`). */
  shell: Record<string, string | undefined>;
}

/** The variables to set: value, generated or required from the shell; throws for a required one missing. */
export function manifestVariables(env: ManifestEnv | undefined, ctx: EnvContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, e] of Object.entries(env ?? {})) {
    const fromShell = ctx.shell[name];
    if (fromShell !== undefined && e.required) out[name] = fromShell;
    else if (e.value != null && e.value !== '') out[name] = e.value;
    else if (e.generator && name in ctx.existing) continue;
    else if (e.generator === 'secret') out[name] = randomBytes(32).toString('hex');
    else if (e.generator === 'url') out[name] = substitute(e.template ?? '%URL%', ctx);
    else if (e.generator === 'template') out[name] = substitute(e.template ?? '', ctx);
    else if (e.required && !(name in ctx.existing)) {
      throw new UpError(
        `scalingo.json: env ${name} is required${e.description ? ` (${e.description})` : ''}: set it in the shell (${name}=… scalingo-emulator up)`,
      );
    }
  }
  return out;
}

function substitute(template: string, ctx: EnvContext): string {
  const tokens: Record<string, string> = { URL: ctx.url, APP: ctx.app, PARENT_APP: '', PR_NUMBER: '' };
  return template.replace(/%([A-Z_]+)%/g, (whole, token: string) => tokens[token] ?? whole);
}
