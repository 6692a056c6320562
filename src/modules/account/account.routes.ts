import { ApiRoutes } from '../../http/api-routes.ts';
import { ERROR_BODY, pageQuery } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { pageParams } from '../../http/validate.ts';
import { paginate } from '../../shared/pagination.ts';
import {
  invoiceList,
  privateNetworkDomainNames,
  reviewAppList,
  scmIntegrationList,
  scmRepoLinkList,
} from './account.schemas.ts';

/**
 * What the official clients read about an account that the emulator has no such thing for: SCM
 * integrations and repo links (with review apps), private network domain names, invoices and
 * next-generation databases. Reads answer as the platform does for an account that has none
 * (empty lists, or the 404 the CLI prints as "no integration link"); creations are refused with a
 * 400 that says the emulator does not provide them (docs/fidelity.md).
 */
const notProvided = (what: string) => ApiError.badRequest(`the Scalingo emulator does not provide ${what}`);
// Routes that always refuse: their only answer is an error.
const refused = (status: number) => ({ [status]: ERROR_BODY });

// `apps`: the `:app` of the app routes is loaded by the route declarations (api-routes.ts).
export function accountRoutes(deps: { pagination: { defaultPerPage: number; maxPerPage: number } }) {
  const r = new ApiRoutes('account');
  const emptyPage = (query: { page?: string; per_page?: string }) => {
    const { page, perPage } = pageParams(query, deps.pagination);
    return paginate(0, page, perPage).meta;
  };

  // SCM integrations (on the auth service for go-scalingo; one port here).
  r.add(
    {
      method: 'get',
      path: '/v1/scm_integrations',
      summary: 'List SCM integrations (none)',
      responses: { 200: scmIntegrationList },
    },
    (c) => c.json({ scm_integrations: [] }),
  );
  r.add(
    {
      method: ['get', 'delete'],
      path: '/v1/scm_integrations/:id',
      summary: 'An SCM integration (always 404: none exists)',
      responses: refused(404),
    },
    () => {
      throw ApiError.notFound('scm_integration');
    },
  );
  r.add(
    {
      method: 'post',
      path: '/v1/scm_integrations',
      summary: 'Create an SCM integration (refused: not provided)',
      responses: refused(400),
    },
    () => {
      throw notProvided(
        'SCM integrations (GitHub, GitLab…): deploy with `scalingo deploy <archive>`, a bound directory or git_source',
      );
    },
  );
  r.add(
    {
      method: 'post',
      path: '/v1/scm_integrations/:id/import_keys',
      summary: "Import an SCM integration's keys (always 404)",
      responses: refused(404),
    },
    () => {
      throw ApiError.notFound('scm_integration');
    },
  );
  r.add(
    {
      method: 'get',
      path: '/v1/scm_repo_links',
      summary: 'List SCM repo links (none)',
      query: pageQuery,
      responses: { 200: scmRepoLinkList },
    },
    (c, { query }) => c.json({ scm_repo_links: [], meta: { pagination: emptyPage(query) } }),
  );

  // An app's repo link: none, so 404 (the CLI prints "Your app '…' has no integration link.").
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/scm_repo_link/review_apps',
      summary: "List an app's review apps (none)",
      responses: { 200: reviewAppList },
    },
    (c) => c.json({ review_apps: [] }),
  );
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/scm_repo_link',
      summary: 'Link an app to an SCM repository (refused: not provided)',
      responses: refused(400),
    },
    () => {
      throw notProvided('SCM repository links: there is no SCM integration to link with');
    },
  );
  r.add(
    {
      method: ['get', 'patch', 'delete'],
      path: '/v1/apps/:app/scm_repo_link',
      summary: "An app's SCM repo link (always 404: none exists)",
      responses: refused(404),
    },
    () => {
      throw ApiError.notFound('scm_repo_link');
    },
  );
  r.add(
    {
      method: ['get', 'post', 'put', 'patch', 'delete'],
      path: '/v1/apps/:app/scm_repo_link/*',
      summary: "Actions on an app's SCM repo link (always 404: none exists)",
      responses: refused(404),
    },
    () => {
      throw ApiError.notFound('scm_repo_link');
    },
  );

  // Private networks: no app is in one. go-scalingo checks page ≥ 1 and 1 ≤ per_page ≤ 50 itself.
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/private_network_domain_names',
      summary: "An app's private network domain names (none)",
      query: pageQuery,
      responses: { 200: privateNetworkDomainNames },
    },
    (c, { query }) => {
      const page = query.page ?? '1';
      const perPage = query.per_page ?? '20';
      if (!/^\d{1,9}$/.test(page) || Number(page) < 1) throw ApiError.invalid('page', 'must be greater than zero');
      if (!/^\d{1,9}$/.test(perPage) || Number(perPage) < 1 || Number(perPage) > 50)
        throw ApiError.invalid('per_page', 'must be between 1 and 50');
      const meta = paginate(0, Number(page), Number(perPage)).meta;
      return c.json({
        domain_names: {
          data: [],
          meta: { ...meta, per_page: Number(perPage), prev_page: meta.prev_page ?? 0, next_page: meta.next_page ?? 0 },
        },
      });
    },
  );

  // Billing: nothing is billed locally.
  r.add(
    {
      method: 'get',
      path: '/v1/account/invoices',
      summary: 'List invoices (none)',
      query: pageQuery,
      responses: { 200: invoiceList },
    },
    (c, { query }) => c.json({ invoices: [], meta: { pagination: emptyPage(query) } }),
  );
  r.add(
    { method: 'get', path: '/v1/account/invoices/:id', summary: 'An invoice (always 404)', responses: refused(404) },
    () => {
      throw ApiError.notFound('invoice');
    },
  );

  return r;
}
