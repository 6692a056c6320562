// The errors every ContainerRuntime throws, typed: callers test `instanceof`, never an engine's
// status codes or a socket's errno (only the runtime knows what its engine answers look like).
// LocalStack's container client does the same (NoSuchContainer, DockerNotAvailable…).

/** Base of every typed runtime error; `code` is stable and meant for logs and tests. */
export class RuntimeError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The engine cannot be reached (socket missing, refused, cut, TLS handshake refused). */
export class EngineUnavailableError extends RuntimeError {
  constructor(cause: unknown, detail?: string) {
    const errno = (cause as NodeJS.ErrnoException)?.code;
    super(detail ?? `the Docker engine cannot be reached (${errno ?? 'unreachable'})`, errno ?? 'ENGINE_UNAVAILABLE', {
      cause,
    });
  }
}

/** The engine has no container with this id (never created, or removed meanwhile). */
export class NoSuchContainerError extends RuntimeError {
  constructor(
    readonly engineId: string,
    options?: { cause?: unknown },
  ) {
    super(`no such container: ${engineId}`, 'NO_SUCH_CONTAINER', options);
  }
}

/** The engine has no image with this tag. */
export class NoSuchImageError extends RuntimeError {
  constructor(
    readonly image: string,
    options?: { cause?: unknown },
  ) {
    super(`no such image: ${image}`, 'NO_SUCH_IMAGE', options);
  }
}

/**
 * The engine refused because of the state of what was named: a container name already in use, a
 * container that is not running (exec, kill, attach), an object still in use.
 */
export class ConflictError extends RuntimeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'CONFLICT', options);
  }
}

/** True for the engine being out of reach, as every runtime reports it. */
export const isEngineUnavailable = (err: unknown): err is EngineUnavailableError =>
  err instanceof EngineUnavailableError;
