#!/usr/bin/env bash
# `npm test`'s pretest step: make sure what the tests need is here (a Docker engine answering,
# Debian's chromium for the dashboard test, busybox-static for the base image, socat, git and ssh). Where it is missing
# and this machine can install it (root or password-less sudo, apt reachable), scripts/docker-up.sh
# does it; where it cannot, one message says what to do and the run stops within seconds.
set -uo pipefail
cd "$(dirname "$0")/.."

log() { echo "[test-setup] $*" >&2; }

missing=()
docker info >/dev/null 2>&1 || missing+=("a Docker engine")
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=("chromium")
{ [ -x /bin/busybox ] || [ -x /usr/bin/busybox ]; } || missing+=("busybox-static")
command -v socat >/dev/null 2>&1 || missing+=("socat")
command -v git >/dev/null 2>&1 || missing+=("git")
command -v ssh >/dev/null 2>&1 || missing+=("openssh-client")
[ ${#missing[@]} -eq 0 ] && exit 0

what=$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')
explain() {
  log "cannot run the tests: missing $what, and $1."
  log "What to do: run 'sudo bash scripts/docker-up.sh' once (Debian/Ubuntu: installs docker.io, busybox-static, chromium, socat, git and openssh-client, starts dockerd),"
  log "or provide them yourself (a Docker engine reachable through DOCKER_HOST or /var/run/docker.sock, /usr/bin/chromium, /bin/busybox from busybox-static), then run npm test again."
  exit 1
}

if [ "$(id -u)" != "0" ] && ! sudo -n true >/dev/null 2>&1; then
  explain "this user can neither install packages nor start dockerd (not root, no password-less sudo)"
fi
command -v apt-get >/dev/null 2>&1 || explain "this is not a Debian/Ubuntu system (no apt-get)"
# The package mirror must answer within seconds (a machine offline would otherwise wait minutes).
mirror=$(grep -rhoE '(https?)://[^/ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n 1)
if [ -n "$mirror" ]; then
  scheme=${mirror%%://*}
  host=${mirror#*://}
  port=$([ "$scheme" = https ] && echo 443 || echo 80)
  case $host in *:*) port=${host##*:}; host=${host%%:*} ;; esac
  timeout 5 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null || explain "the package mirror $mirror does not answer"
fi

log "$what missing: running scripts/docker-up.sh"
exec bash scripts/docker-up.sh
