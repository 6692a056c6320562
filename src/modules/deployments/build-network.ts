// What a buildpack-like build's steps may reach (`builds.network`, issue 34). The platform's builds have
// the internet; the emulator's are offline by default (`none`: the npm registry is reached by the host
// beforehand), and `bridge` or a user-defined network's name gives them a network for the frameworks
// that fetch at build time (Next.js `next/font`, Prisma engines). `host` is refused by the config schema.

/** The default: build containers see loopback only. */
export const OFFLINE_BUILDS = 'none';

/** How a build container joins `network` (the runtime's ContainerSpec fields). */
export function buildContainerNetwork(network: string): { networkNone?: boolean; network?: string } {
  if (network === OFFLINE_BUILDS) return { networkNone: true };
  if (network === 'bridge') return {}; // the engine's default bridge
  return { network };
}

// What tools print when a name does not resolve or no route exists: Node (getaddrinfo ENOTFOUND /
// EAI_AGAIN, ENETUNREACH), curl, wget, pip, bundler, git. A fixed pattern, never the user's.
const NETWORK_FAILURE = new RegExp(
  `\\b(${[
    'ENOTFOUND',
    'EAI_AGAIN',
    'ENETUNREACH',
    'getaddrinfo',
    'Temporary failure in name resolution',
    'Could not resolve host',
    'Network is unreachable',
    'Name or service not known',
    'Failed to establish a new connection',
  ].join('|')})\\b`,
);

/**
 * Passes a build's lines on and remembers whether one said that the network could not be reached;
 * `hint()` is then the line that explains why (offline builds) and names the setting, else null.
 */
export function watchOfflineBuild(network: string, say: (line: string) => void) {
  let failed = false;
  return {
    say(line: string) {
      if (!failed && network === OFFLINE_BUILDS && NETWORK_FAILURE.test(line)) failed = true;
      say(line);
    },
    hint(): string | null {
      return failed
        ? '!      Builds run offline here (builds.network: "none"): a build step cannot reach the internet. The platform\'s ' +
            'builds can: set builds.network to "bridge" in emulator.config.json (or EMULATOR_BUILDS_NETWORK=bridge) to give them the engine\'s network.'
        : null;
    },
  };
}

/** The line explaining a build that failed because builds.network names a network the engine lacks, else null. */
export function missingNetworkHint(network: string, failure: string): string | null {
  if (network === OFFLINE_BUILDS || network === 'bridge' || !failure.includes(`network ${network} not found`))
    return null;
  return (
    `!      builds.network is "${network}", a network the Docker engine does not have: create it ` +
    `(docker network create ${network}) or set builds.network to "none" or "bridge".`
  );
}
