import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody } from '../../http/validate.ts';
import { addDomainSchema, updateDomainSchema } from './domains.schemas.ts';
import type { DomainsService } from './domains.service.ts';

/** /v1/apps/:app/domains — go-scalingo's SubresourceList/Add/Get/Update/Delete. */
export function domainsRoutes(deps: { domains: DomainsService }) {
  const { domains } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.get('/v1/apps/:app/domains', (c) => c.json({ domains: domains.list(user(c), c.req.param('app')) }));
  r.get('/v1/apps/:app/domains/:id', (c) => c.json({ domain: domains.show(user(c), c.req.param('app'), c.req.param('id')) }));

  r.post('/v1/apps/:app/domains', async (c) => {
    const { domain } = await jsonBody(c, addDomainSchema, 'domain');
    return c.json({ domain: domains.add(user(c), c.req.param('app'), domain) }, 201);
  });

  // go-scalingo's SubresourceUpdate is a PATCH; PUT is accepted as the platform's reference allows it.
  const update = async (c: Context<AppEnv, '/v1/apps/:app/domains/:id'>) => {
    const { domain } = await jsonBody(c, updateDomainSchema, 'domain');
    return c.json({ domain: domains.update(user(c), c.req.param('app'), c.req.param('id'), domain) });
  };
  r.patch('/v1/apps/:app/domains/:id', update);
  r.put('/v1/apps/:app/domains/:id', update);

  r.delete('/v1/apps/:app/domains/:id', (c) => {
    domains.remove(user(c), c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  return r;
}
