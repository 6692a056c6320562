import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { addDomainSchema, domainEnvelope, domainList, updateDomainSchema } from './domains.schemas.ts';
import { type DomainsService } from './domains.service.ts';

/** /v1/apps/:app/domains — go-scalingo's SubresourceList/Add/Get/Update/Delete. */
export function domainsRoutes(deps: { domains: DomainsService }) {
  const { domains } = deps;
  const r = new ApiRoutes('domains');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/domains',
      summary: "List an app's custom domains",
      responses: { 200: domainList },
    },
    (c) => c.json({ domains: domains.list(user(c), c.get('app').id) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/domains/:id',
      summary: 'Get a custom domain',
      responses: { 200: domainEnvelope },
    },
    (c, { params }) => c.json({ domain: domains.show(user(c), c.get('app').id, params.id) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/domains',
      summary: 'Add a custom domain (optionally with its certificate)',
      body: addDomainSchema,
      bodyRoot: 'domain',
      responses: { 201: domainEnvelope },
    },
    (c, { body: { domain } }) => c.json({ domain: domains.add(user(c), c.get('app').id, domain) }, 201),
  );

  // go-scalingo's SubresourceUpdate is a PATCH; PUT is accepted as the platform's reference allows it.
  r.add(
    {
      method: ['patch', 'put'],
      path: '/v1/apps/:app/domains/:id',
      summary: 'Update a custom domain (canonical, certificate, Let’s Encrypt)',
      body: updateDomainSchema,
      bodyRoot: 'domain',
      responses: { 200: domainEnvelope },
    },
    (c, { params, body: { domain } }) =>
      c.json({ domain: domains.update(user(c), c.get('app').id, params.id, domain) }),
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app/domains/:id',
      summary: 'Remove a custom domain',
      responses: { 204: null },
    },
    (c, { params }) => {
      domains.remove(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  return r;
}
