#!/usr/bin/env bash
# `npm test`'s pretest step: make sure what the tests need is here (scripts/needs.sh: a Docker engine
# answering, mmdebstrap for the images the emulator builds on first use, busybox-static, git, ssh, psql,
# socat, openssl, chromium, docker-registry, the other architecture's cross compiler and qemu-user). Silent when all
# is there. Where something is missing and this machine can
# install it (root or password-less sudo, apt-get), scripts/docker-up.sh does; where it cannot, one
# message says what to do and the run stops at once.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/needs.sh

log() { echo "[test-setup] $*" >&2; }

missing=$(missing_packages | tr '\n' ' ')
missing=${missing% }
engine_answers || missing="${missing:+$missing, }a running Docker engine"
[ -z "$missing" ] && exit 0

explain() {
  log "cannot run the tests: missing $missing, and $1."
  log "What to do: run 'sudo bash scripts/docker-up.sh' once (Debian/Ubuntu: installs what scripts/needs.sh lists and starts dockerd),"
  log "or provide them yourself (a Docker engine reachable through DOCKER_HOST or /var/run/docker.sock, and the packages above), then run npm test again."
  exit 1
}

if [ "$(id -u)" != "0" ] && ! sudo -n true >/dev/null 2>&1; then
  explain "this user can neither install packages nor start dockerd (not root, no password-less sudo)"
fi
has apt-get || explain "this is not a Debian/Ubuntu system (no apt-get)"

log "missing: $missing. Running scripts/docker-up.sh"
exec bash scripts/docker-up.sh
