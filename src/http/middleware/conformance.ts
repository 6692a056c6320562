import { type MiddlewareHandler } from 'hono';
import { type z } from 'zod';
import { type Logger } from '../../shared/logger.ts';
import { isSchema } from '../api-routes.ts';
import { ERROR_BODY, schemaOf } from '../api-schemas.ts';
import { type AppEnv } from '../env.ts';

/**
 * Checks every answer against what its route declares (`validateResponses`, on in the test suite):
 * the status is one of the declared ones (or an error in the platform's shapes), JSON bodies match
 * their schema, other bodies have the declared content type. A mismatch is the emulator's own bug:
 * the answer becomes a 500 naming the route and the first problems, so the test that met it fails.
 */
export function responseConformance(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    const route = c.get('route');
    const problem = await check(res, route);
    if (!problem) return;
    const where = route ? `${c.req.method} ${route.def.path}` : `${c.req.method} ${c.req.path}`;
    logger.error({ route: where, status: res.status, problem }, 'answer does not match its declared schema');
    c.res = new Response(
      JSON.stringify({ error: `answer of ${where} (${res.status}) does not match its declared schema: ${problem}` }),
      {
        status: 500,
        headers: { 'content-type': 'application/json' },
      },
    );
  };
}

async function check(res: Response, route: AppEnv['Variables']['route'] | undefined): Promise<string | null> {
  const type = res.headers.get('content-type') ?? '';
  // An error status a route declares with its own schema (the health's 503) is checked like an answer.
  if (res.status >= 400 && !isSchema(route?.def.responses[res.status])) {
    // Errors come from the one error writer (or the not-found handler): the platform's shapes.
    if (res.status === 429) return type.startsWith('text/plain') ? null : `a 429 is plain text, not ${type}`;
    if (!type.startsWith('application/json')) return `an error is JSON, not ${type || 'no content type'}`;
    return issues(ERROR_BODY, await res.clone().json());
  }
  // Undeclared handlers (none in the API: test/unit/openapi.test.ts checks every route is declared).
  if (!route) return null;
  const spec = route.def.responses[res.status];
  if (spec === undefined)
    return `status ${res.status} is not declared (declared: ${Object.keys(route.def.responses).join(', ')})`;
  if (spec === null)
    return res.body === null || res.status === 204 || (res.status >= 300 && res.status < 400)
      ? null
      : 'a body where none is declared';
  if (isSchema(spec)) {
    if (!type.startsWith('application/json')) return `declared JSON, answered ${type || 'no content type'}`;
    return issues(schemaOf(spec), await res.clone().json());
  }
  const wanted = [spec.contentType].flat().map((t) => t.split(';')[0]);
  return wanted.some((want) => type.startsWith(want) || want === '*/*')
    ? null
    : `declared ${wanted.join(' or ')}, answered ${type || 'no content type'}`;
}

function issues(schema: z.ZodType, value: unknown): string | null {
  const r = schema.safeParse(value);
  if (r.success) return null;
  return r.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
