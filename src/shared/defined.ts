/**
 * The value, or a plain Error (a 500 with the request id) when an invariant the code relies on is
 * broken: a row re-read right after it was written, a built-in user, a recipe named by a constant.
 * Used where a check would otherwise be a non-null assertion `!` that hides the broken case.
 */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`invariant broken: ${what} is missing`);
  return value;
}
