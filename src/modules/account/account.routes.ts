import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { pageParams, pathParam } from '../../http/validate.ts';
import { paginate } from '../../shared/pagination.ts';
import type { AppsService } from '../apps/apps.service.ts';

/**
 * What the official clients read about an account that the emulator has no such thing for: SCM
 * integrations and repo links (with review apps), private network domain names, invoices and
 * next-generation databases. Reads answer as the platform does for an account that has none
 * (empty lists, or the 404 the CLI prints as "no integration link"); creations are refused with a
 * 400 that says the emulator does not provide them (docs/fidelity.md).
 */
const notProvided = (what: string) => ApiError.badRequest(`the Scalingo emulator does not provide ${what}`);

export function accountRoutes(deps: { apps: AppsService; pagination: { defaultPerPage: number; maxPerPage: number } }) {
  const r = new Hono<AppEnv>();
  const appOf = (c: Context<AppEnv>) => deps.apps.visibleApp(c.get('principal').user, pathParam(c, 'app'));
  const emptyPage = (c: Context<AppEnv>) => {
    const { page, perPage } = pageParams(c, deps.pagination);
    return paginate(0, page, perPage).meta;
  };

  // SCM integrations (on the auth service for go-scalingo; one port here).
  r.get('/v1/scm_integrations', (c) => c.json({ scm_integrations: [] }));
  r.get('/v1/scm_integrations/:id', () => {
    throw ApiError.notFound('scm_integration');
  });
  r.post('/v1/scm_integrations', () => {
    throw notProvided('SCM integrations (GitHub, GitLab…): deploy with `scalingo deploy <archive>`, a bound directory or git_source');
  });
  r.delete('/v1/scm_integrations/:id', () => {
    throw ApiError.notFound('scm_integration');
  });
  r.post('/v1/scm_integrations/:id/import_keys', () => {
    throw ApiError.notFound('scm_integration');
  });
  r.get('/v1/scm_repo_links', (c) => c.json({ scm_repo_links: [], meta: { pagination: emptyPage(c) } }));

  // An app's repo link: none, so 404 (the CLI prints "Your app '…' has no integration link.").
  r.get('/v1/apps/:app/scm_repo_link/review_apps', (c) => {
    appOf(c);
    return c.json({ review_apps: [] });
  });
  r.post('/v1/apps/:app/scm_repo_link', (c) => {
    appOf(c);
    throw notProvided('SCM repository links: there is no SCM integration to link with');
  });
  r.on(['GET', 'PATCH', 'DELETE'], '/v1/apps/:app/scm_repo_link', (c) => {
    appOf(c);
    throw ApiError.notFound('scm_repo_link');
  });
  r.all('/v1/apps/:app/scm_repo_link/*', (c) => {
    appOf(c);
    throw ApiError.notFound('scm_repo_link');
  });

  // Private networks: no app is in one. go-scalingo checks page ≥ 1 and 1 ≤ per_page ≤ 50 itself.
  r.get('/v1/apps/:app/private_network_domain_names', (c) => {
    appOf(c);
    const page = c.req.query('page') ?? '1';
    const perPage = c.req.query('per_page') ?? '20';
    if (!/^\d{1,9}$/.test(page) || Number(page) < 1) throw ApiError.invalid('page', 'must be greater than zero');
    if (!/^\d{1,9}$/.test(perPage) || Number(perPage) < 1 || Number(perPage) > 50) throw ApiError.invalid('per_page', 'must be between 1 and 50');
    const meta = paginate(0, Number(page), Number(perPage)).meta;
    return c.json({ domain_names: { data: [], meta: { ...meta, per_page: Number(perPage), prev_page: meta.prev_page ?? 0, next_page: meta.next_page ?? 0 } } });
  });

  // Billing: nothing is billed locally.
  r.get('/v1/account/invoices', (c) => c.json({ invoices: [], meta: { pagination: emptyPage(c) } }));
  r.get('/v1/account/invoices/:id', () => {
    throw ApiError.notFound('invoice');
  });

  // Next-generation databases (dedicated database apps).
  r.get('/v1/databases', (c) => c.json({ databases: [] }));
  r.post('/v1/databases', () => {
    throw notProvided('dedicated databases: stand-in addons (POST /v1/apps/:app/addons) exist, without a database server');
  });

  return r;
}
