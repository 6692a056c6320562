import { isoDate } from '../../shared/clock.ts';
import { appUrl, gitUrl, type Urls } from '../../shared/urls.ts';
import { type UserRow } from '../auth/principal.ts';
import { type AppRow } from './apps.store.ts';

export interface AppViewContext {
  urls: Urls;
  region: string;
  ownerOf: (app: AppRow) => UserRow | undefined;
  parentName: (app: AppRow) => string | null;
  /** The app's project `{id, name}` (projects module); the CLI prints `<owner>/<project name>`. */
  projectOf?: (app: AppRow) => { id: string; name: string };
}

/**
 * The Application resource as the platform writes it. `status` everywhere, lists included (the
 * official CLI's `apps` table prints it from the list); `limits` only when an operator set one
 * (or on child creation); `parent_app_name` on child apps.
 */
export function appJson(app: AppRow, ctx: AppViewContext, opts: { status?: boolean; childCreation?: boolean } = {}) {
  const owner = ctx.ownerOf(app);
  const limits = JSON.parse(app.limits) as Record<string, unknown>;
  const url = appUrl(ctx.urls, app.name);
  const parent = ctx.parentName(app);
  return {
    id: app.id,
    name: app.name,
    region: ctx.region,
    created_at: isoDate(app.created_at),
    updated_at: isoDate(app.updated_at),
    git_url: gitUrl(ctx.urls, app.name),
    owner: owner ? { id: owner.id, username: owner.username, email: owner.email } : null,
    url,
    base_url: url,
    links: { deployments_stream: `${ctx.urls.api.replace(/^http/, 'ws')}/deployments-stream/apps/${app.id}` },
    force_https: app.force_https === 1,
    sticky_session: app.sticky_session === 1,
    router_logs: app.router_logs === 1,
    flags: { 'sticky-session': app.sticky_session === 1, ...(JSON.parse(app.flags) as Record<string, boolean>) },
    ...(Object.keys(limits).length || opts.childCreation ? { limits } : {}),
    last_deployed_at: isoDate(app.last_deployed_at),
    last_deployed_by: app.last_deployed_by,
    last_deployment_id: app.last_deployment_id,
    stack_id: app.stack_id,
    data_access_consent: { app_id: app.id, user_id: app.owner_id, containers_until: null, database_until: null },
    hds_resource: false,
    private_networks_ids: [] as string[],
    ...(ctx.projectOf ? { project: ctx.projectOf(app) } : {}),
    ...(parent ? { parent_app_name: parent } : {}),
    status: app.status,
    ...(opts.childCreation ? { git_source: app.git_source } : {}),
  };
}
