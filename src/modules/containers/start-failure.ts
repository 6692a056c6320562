// A container that exits before it is ready: the error says so and carries its last lines of output,
// so that the deployment's output shows why (a missing variable, an unreachable database…) without a
// trip to `scalingo logs`.
import { type ContainerRuntime } from '../../runtime/runtime.ts';

const TAIL_LINES = 20;
const LINE_CHARS = 300;

export class StartFailure extends Error {
  constructor(
    message: string,
    /** The container's last lines of output (stdout and stderr, oldest first, each cut at 300 characters). */
    readonly output: string[],
  ) {
    super(message);
  }
}

/**
 * A container's last 20 lines of output (stdout and stderr, oldest first, each cut at 300 characters): what a start
 * failure and a crash record show. Empty when the engine no longer has the container.
 */
export async function lastOutputLines(runtime: Pick<ContainerRuntime, 'logs'>, engineId: string): Promise<string[]> {
  const output: string[] = [];
  try {
    for await (const line of await runtime.logs(engineId, { follow: false, tail: TAIL_LINES }))
      output.push(line.text.slice(0, LINE_CHARS));
  } catch {
    // the container may already be gone
  }
  return output.slice(-TAIL_LINES);
}

/** The exit as a StartFailure, with what the engine still has of the container's output. */
export async function startFailure(
  runtime: Pick<ContainerRuntime, 'logs'>,
  engineId: string,
  message: string,
): Promise<StartFailure> {
  return new StartFailure(message, await lastOutputLines(runtime, engineId));
}
