import type { Logger } from '../shared/logger.ts';
import type { Principal } from '../modules/auth/principal.ts';

/** Hono context variables set by the middleware chain. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The request's child logger, made on first use (most requests never log). */
    log: () => Logger;
    principal: Principal;
  };
}
