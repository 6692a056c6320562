#!/usr/bin/env bash
# Builds the Debian-based images (language stacks, addon servers) ahead of use, installing
# mmdebstrap when missing. Images are cached by recipe hash: a second run builds nothing.
# Usage: scripts/images-up.sh [node python ruby postgresql mysql redis]  (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "[images-up] $*" >&2; }
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
  log "installing mmdebstrap (Debian package; builds root filesystems from the machine's Debian mirror)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

start=$(date +%s)
npx --no-install tsx scripts/build-images.ts busybox "$@"
log "images ready in $(( $(date +%s) - start ))s"
