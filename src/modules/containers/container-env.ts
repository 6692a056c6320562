import { type ContainerSize } from '../../config/schema.ts';

export const WEB_PORT = 5000;

/**
 * Process types that listen on $PORT, published on the host: `web` (the router's), and `tcp`, which the
 * platform's TCP gateway addon reaches on $PORT (doc.scalingo.com/addons/tcp-gateway/start).
 */
export const listensOnPort = (type: string) => type === 'web' || type === 'tcp';

/**
 * Environment of a container: the app's variables, then the platform's own variables, which win
 * (PORT for web and tcp containers, APP, CONTAINER, CONTAINER_VERSION, CONTAINER_SIZE, CONTAINER_MEMORY,
 * STACK; SCALINGO_USER_ID in one-off containers), then a one-off's extra `env`.
 */
export function containerEnv(opts: {
  appName: string;
  type: string;
  index: number;
  size: ContainerSize;
  stack: string;
  version: string;
  appVariables: Record<string, string>;
  userId?: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  const platform: Record<string, string> = {
    APP: opts.appName,
    CONTAINER: `${opts.type}-${opts.index}`,
    CONTAINER_VERSION: opts.version,
    CONTAINER_SIZE: opts.size.name,
    CONTAINER_MEMORY: String(opts.size.memory),
    STACK: opts.stack,
  };
  if (listensOnPort(opts.type)) platform.PORT = String(WEB_PORT);
  if (opts.userId) platform.SCALINGO_USER_ID = opts.userId;
  return { ...opts.appVariables, ...platform, ...(opts.extra ?? {}) };
}
