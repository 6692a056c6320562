#!/usr/bin/env bash
# Debian and Ubuntu only (apt-get): make sure a Docker engine answers on this machine and that the packages
# scripts/needs.sh lists are installed (Debian's docker.io, busybox-static, mmdebstrap, git, openssh-client,
# postgresql-client, socat, openssl, chromium, docker-registry, the other architecture's cross compiler and
# qemu-user). Starts dockerd in the background and waits
# for `docker info`. Elsewhere (macOS, Windows, Fedora, Arch…) it stops at once: the README's quick start
# says what to install there (a Docker engine, Node.js, git).
# Idempotent: does nothing when the engine answers and every package is there.
# apt is asked about its own sources (`apt-get update`), bounded in time: a mirror that does not answer
# stops the script within minutes with apt's own message.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/needs.sh

log() { echo "[docker-up] $*" >&2; }

if ! command -v apt-get >/dev/null 2>&1; then
  log "this is not a Debian/Ubuntu system (no apt-get): install a Docker engine (Docker Desktop, or your distribution's"
  log "docker/moby package), Node.js and git yourself, as the README's quick start says; the emulator gets its images"
  log "from the engine's registry there (images.source auto)."
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

mapfile -t packages < <(missing_packages)
if [ ${#packages[@]} -gt 0 ]; then
  log "installing ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_opts=(-o Acquire::http::Timeout=30 -o Acquire::Retries=2)
  aptlog=$(mktemp)
  if ! $SUDO timeout 600 apt-get "${apt_opts[@]}" --error-on=any update -qq >"$aptlog" 2>&1; then
    log "apt-get update failed; its last lines:"
    tail -n 20 "$aptlog" >&2
    exit 1
  fi
  $SUDO timeout 1800 apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  # The package starts a registry service on every address (:5000) where systemd runs: the tests start their
  # own, on a network namespace's loopback, and nothing else should listen.
  if [[ " ${packages[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now docker-registry >/dev/null 2>&1 || true
  fi
fi

if engine_answers; then
  log "engine already answers"
  exit 0
fi

logfile=${DOCKERD_LOG:-/tmp/dockerd.log}
log "starting dockerd (log: $logfile)"
# The storage driver falls back to vfs where overlayfs is not available.
$SUDO nohup dockerd >"$logfile" 2>&1 &

for i in $(seq 1 120); do
  if engine_answers; then
    log "engine ready after ${i}s ($(docker info --format '{{.ServerVersion}} {{.Driver}}'))"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 120s; last lines of its log:"
tail -n 40 "$logfile" >&2 || true
exit 1
