import { type AppRow } from '../modules/apps/apps.store.ts';
import { type Principal, type UserRow } from '../modules/auth/principal.ts';
import { type DeclaredRoute } from './api-routes.ts';

/** Hono context variables set by the middleware chain. */
export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    /** The declared route that answered (set before its handler runs; read by the conformance check). */
    route: DeclaredRoute;
    /** Loads an app as a user may see it (404 otherwise): installed by the HTTP app for route declarations. */
    appLoader: (user: UserRow, appKey: string) => AppRow;
    /** The `:app` of the path, loaded before the handler of a declared route runs. */
    app: AppRow;
  };
}
