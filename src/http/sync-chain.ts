import { type Context, type ErrorHandler } from 'hono';
import { type Result } from 'hono/router';
import { type RouterRoute } from 'hono/types';
import { type AppEnv } from './env.ts';

/** A middleware or handler as the chain calls it: its `next` may answer synchronously, its result may be a promise. */
type Step = (c: Context<AppEnv>, next: () => unknown) => unknown;

/**
 * Hono runs a request that matched one handler by calling it, and one that matched several (the emulator's
 * middlewares, then the route) through its `compose`, an `async` function per step: every request then waits on
 * a promise at each step and its answer leaves from a microtask. This turns a match of several handlers into
 * one handler that runs them with the same rules as hono's `compose` (each step's error goes to the app's error
 * handler at that step, so the steps around it see the error's answer; a chain that ends without an answer gets
 * the app's not-found answer), synchronously for as long as each step answers synchronously: a cached GET goes
 * through the whole chain and out without a promise. Path parameters are the union of the steps' own (they agree:
 * the same `:app` in `/v1/apps/:app/*` and in the route), read at step 0.
 */
export function chainOfMatch<T extends [unknown, RouterRoute]>(
  onError: ErrorHandler<AppEnv>,
): (result: Result<T>) => Result<T> {
  return (result) => {
    const matched: [T, unknown][] = result[0];
    if (matched.length < 2) return result;
    const steps = matched.map(([entry]) => entry[0] as Step);
    const params = Object.assign({}, ...matched.map(([, p]) => p));
    const chain: Step = (c) => new ChainRun(c, steps, onError).run();
    // The route of the last step (the endpoint) stands for the chain in hono's `routePath` / `matchedRoutes`.
    const entry = [chain, matched[matched.length - 1][0][1]];
    return (result.length === 2 ? [[[entry, params]], result[1]] : [[[entry, params]]]) as Result<T>;
  };
}

type Settled = Context<AppEnv> | Promise<Context<AppEnv>>;

/**
 * One request's run through the chain. A class, not closures made per request: the build (esbuild's `keepNames`,
 * in tsx and in the bundle) gives every named function made at run time its name with `Object.defineProperty`,
 * which cost more than the rest of the chain's own work; methods are made once, on the prototype.
 */
class ChainRun {
  #index = -1;

  constructor(
    readonly c: Context<AppEnv>,
    readonly steps: Step[],
    readonly onError: ErrorHandler<AppEnv>,
  ) {}

  run(): unknown {
    const done = this.dispatch(0);
    return done instanceof Promise ? done.then((c) => this.answer(c)) : this.answer(done);
  }

  dispatch(i: number): Settled {
    if (i <= this.#index) throw new Error('next() called multiple times');
    this.#index = i;
    const { c } = this;
    const step = this.steps[i];
    if (!step) return c.finalized ? c : this.settle(c.notFound(), false);
    let res: unknown;
    try {
      res = step(c, () => this.dispatch(i + 1));
    } catch (err) {
      return this.failed(err);
    }
    return res instanceof Promise
      ? res.then(
          (r) => this.settle(r, false),
          (err) => this.failed(err),
        )
      : this.settle(res, false);
  }

  failed(err: unknown): Settled {
    if (!(err instanceof Error)) throw err;
    this.c.error = err;
    return this.settle(this.onError(err, this.c), true);
  }

  settle(res: unknown, isError: boolean): Settled {
    if (res instanceof Promise) return res.then((r) => this.settle(r, isError));
    // As hono's compose: a step's answer (or a context, from `return next()`) is kept unless one was set.
    if (res && (!this.c.finalized || isError)) this.c.res = res as Response;
    return this.c;
  }

  answer(c: Context<AppEnv>): Response {
    if (!c.finalized)
      throw new Error('Context is not finalized. Did you forget to return a Response object or `await next()`?');
    return c.res;
  }
}
