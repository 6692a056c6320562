#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine. Installs Debian's docker.io and
# busybox-static when needed, starts dockerd in the background, waits for `docker info`.
# Also installs the tools the tests and the product use besides Docker when missing: socat (the
# reliability suite's proxy socket), git (git_source deployments; the git push endpoint runs git's own
# receive-pack/upload-pack/archive), openssh-client (the git push tests push with the real ssh) and
# chromium (the dashboard test drives it headless), postgresql-client (psql through a db-tunnel),
# openssl (the remote-engine test makes its TLS certificates).
# Idempotent: does nothing when an engine already answers and the tools are there.
set -euo pipefail

log() { echo "[docker-up] $*" >&2; }

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

# Tools the tests use besides Docker: socat (the reliability suite's proxy socket in front of the
# engine), git (git_source deployments, the git push endpoint), openssh-client (git push tests),
# chromium (the dashboard test drives it headless), postgresql-client (psql through a db-tunnel).
# Installed even when an engine already answers.
tools=()
command -v socat >/dev/null 2>&1 || tools+=(socat)
command -v git >/dev/null 2>&1 || tools+=(git)
{ command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; } || tools+=(openssh-client)
command -v psql >/dev/null 2>&1 || tools+=(postgresql-client)
command -v openssl >/dev/null 2>&1 || tools+=(openssl)
{ command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; } || tools+=(chromium fonts-dejavu-core)
if [ ${#tools[@]} -gt 0 ]; then
  log "installing ${tools[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null
fi

if docker info >/dev/null 2>&1; then
  log "engine already answers"
  exit 0
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx httpd || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" iptables >/dev/null
fi

logfile=${DOCKERD_LOG:-/tmp/dockerd.log}
log "starting dockerd (log: $logfile)"
# The storage driver falls back to vfs where overlayfs is not available.
$SUDO nohup dockerd >"$logfile" 2>&1 &

for i in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    log "engine ready after ${i}s ($(docker info --format '{{.ServerVersion}} {{.Driver}}'))"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 120s; last lines of its log:"
tail -n 40 "$logfile" >&2 || true
exit 1
