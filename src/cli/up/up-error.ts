/** A mistake of the user's (bad input, a port in use…): printed as one line, exit code 1, no stack trace. */
export class UpError extends Error {
  constructor(
    message: string,
    /** The HTTP status when the emulator refused a call. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpError';
  }
}
