// Who a request acts for: the user row and the token used. Auth owns these types; services take a
// UserRow without depending on the HTTP layer (src/http/env.ts imports them for the Hono context).

export interface UserRow {
  id: string;
  username: string;
  email: string;
  fullname: string;
  payment_method: number;
  created_at: number;
}

export interface Principal {
  user: UserRow;
  /** The API token the request was made with (directly or through its bearer). Null for password auth. */
  tokenId: string | null;
}
