import type { Logger } from '../shared/logger.ts';

export interface Principal {
  user: UserRow;
  /** The API token the request was made with (directly or through its bearer). Null for password auth. */
  tokenId: string | null;
}

export interface UserRow {
  id: string;
  username: string;
  email: string;
  fullname: string;
  payment_method: number;
  created_at: number;
}

/** Hono context variables set by the middleware chain. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The request's child logger, made on first use (most requests never log). */
    log: () => Logger;
    principal: Principal;
  };
}
