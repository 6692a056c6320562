#!/bin/sh
# The emulator image's entrypoint (scripts/emulator-image/build.ts puts it in the image): what the emulator needs from
# its container is checked first, each missing thing one line on stderr and exit 1, then the command runs as PID 1's child.
set -eu
# Help needs nothing of the container.
case ${1:-} in -h | --help | help) exec /usr/local/bin/scalingo-emulator --help ;; esac
fail() {
  echo "scalingo-emulator: $*" >&2
  exit 1
}

# The engine: DOCKER_HOST (unix:// path, tcp://…) or the socket mounted at the usual place. A socket path that was not
# mounted is missing, or a directory (the engine creates one for a bind whose source does not exist).
engine=${DOCKER_HOST:-unix:///var/run/docker.sock}
case $engine in
unix://*)
  sock=${engine#unix://}
  [ -S "$sock" ] || fail "no Docker engine socket at $sock: mount the engine's socket (-v /var/run/docker.sock:/var/run/docker.sock) or set DOCKER_HOST"
  ;;
esac

# The data directory (a volume): written at once, so a read-only one is said here, not by the first failed write.
data=${EMULATOR_DATA_DIR:-/data}
mkdir -p "$data" 2>/dev/null || fail "cannot create the data directory $data (a read-only volume?): mount a writable volume there"
probe="$data/.write-probe.$$"
if ! (: >"$probe") 2>/dev/null; then
  fail "the data directory $data is not writable (a read-only volume?): mount a writable volume there"
fi
rm -f "$probe"

# On a user-defined network (EMULATOR_DOCKER_NETWORK: the compose example, a CI service) the API, the router and SSH are
# reached by the other containers through this container's address: they listen on every address of the container,
# whose ports the user publishes on the host's 127.0.0.1 (-p 127.0.0.1:5100:5100). With the host's network, 127.0.0.1.
if [ -n "${EMULATOR_DOCKER_NETWORK:-}" ] && [ -z "${EMULATOR_HOST:-}" ]; then
  export EMULATOR_HOST=0.0.0.0
fi

# The user's API token from the environment (the admin token is the emulator's own EMULATOR_ADMIN_TOKEN): a
# configuration file with the default user holding it, unless a configuration file is given.
if [ -n "${EMULATOR_API_TOKEN:-}" ] && [ -z "${EMULATOR_CONFIG:-}" ]; then
  printf '%s' "$EMULATOR_API_TOKEN" | grep -Eq '^[A-Za-z0-9_.-]{16,200}$' ||
    fail "EMULATOR_API_TOKEN must be 16 to 200 letters, digits, '.', '_' or '-'"
  export EMULATOR_CONFIG=/tmp/scalingo-emulator.config.json
  printf '{"users":[{"username":"dev","email":"dev@example.test","password":"dev-password","fullname":"Development User","paymentMethod":true,"apiTokens":["%s"]}]}\n' \
    "$EMULATOR_API_TOKEN" >"$EMULATOR_CONFIG"
fi

# EMULATOR_RESET_ON_STOP=true (a CI service, `docker compose down -v`): when the container is stopped, every app
# goes first (the control plane's reset: its containers, addon servers, volumes and networks), then the emulator.
if [ "${EMULATOR_RESET_ON_STOP:-false}" = true ] && [ "${1:-start}" = start ]; then
  [ -n "${EMULATOR_ADMIN_TOKEN:-}" ] || fail "EMULATOR_RESET_ON_STOP needs EMULATOR_ADMIN_TOKEN (the control plane's token)"
  /usr/local/bin/scalingo-emulator "$@" &
  pid=$!
  # (no -T: busybox 1.35's wget crashes with it; the container's stop timeout bounds the wait)
  reset_then_stop() {
    busybox wget -q -O /dev/null --header "Authorization: Bearer $EMULATOR_ADMIN_TOKEN" \
      --header "Content-Type: application/json" --post-data '{}' \
      "http://127.0.0.1:${EMULATOR_PORT:-5100}/_emulator/reset" || echo "scalingo-emulator: the reset before stopping failed" >&2
    kill -TERM "$pid"
  }
  trap reset_then_stop TERM INT
  # The first wait returns when a signal arrives; the second waits for the emulator's own exit.
  status=0
  wait "$pid" || status=$?
  if kill -0 "$pid" 2>/dev/null; then
    status=0
    wait "$pid" || status=$?
  fi
  exit "$status"
fi

exec /usr/local/bin/scalingo-emulator "$@"
