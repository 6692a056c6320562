# What the emulator and its tests need on the machine, as Debian packages: sourced by
# scripts/test-setup.sh (npm test's pretest step) and scripts/docker-up.sh, so the list is written once.
# Each entry: a check command, then the packages that satisfy it.
#   dockerd, iptables, busybox-static: the engine and the base image (FROM scratch + a static busybox);
#   mmdebstrap: the Debian-built stack and addon images, built by the emulator on first use;
#   git, openssh-client: git_source deployments and the git push endpoint (git's own receive-pack);
#   postgresql-client: psql through a db-tunnel; socat: the reliability suite's proxy socket;
#   openssl: the remote-engine test's certificates; chromium: the dashboard test, headless;
#   iproute2, util-linux (ip netns, nsenter): the swarm test's second node, a dockerd in its own network namespace;
#   docker-registry: the image sources' test, a registry mirror on that namespace's loopback (the emulator
#   itself needs none of these tools but a Docker engine, git for git push deploys, and mmdebstrap only for
#   the Debian path of its images: README "Quick start").
#   docker-compose: the compose example's test (Debian bookworm has Compose v1, 1.29, only).
#   g++-<other arch's triplet>, qemu-user: the single executable for the other architecture (npm run build:exe --
#   --arch arm64 on x64), its add-on cross-compiled and its Node run under QEMU (scripts/exe/cross.ts), and its test
#   (test/docker/executable-other-arch.test.ts). Without Recommends: qemu-user-binfmt would register QEMU with the
#   kernel for every foreign binary of the machine; the build and the test call qemu-<arch> themselves.

has() { command -v "$1" >/dev/null 2>&1; }
static_busybox() { [ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -x httpd >/dev/null; }

# Prints the Debian packages missing on this machine, one per line.
missing_packages() {
  has dockerd || echo docker.io
  has iptables || echo iptables
  static_busybox || echo busybox-static
  has mmdebstrap || echo mmdebstrap
  has git || echo git
  { has ssh && has ssh-keygen; } || echo openssh-client
  has psql || echo postgresql-client
  has socat || echo socat
  has openssl || echo openssl
  has ip || echo iproute2
  has nsenter || echo util-linux
  has docker-registry || echo docker-registry
  { has docker-compose || docker compose version >/dev/null 2>&1; } || echo docker-compose
  { has chromium || [ -x /usr/bin/chromium ]; } || printf '%s\n' chromium fonts-dejavu-core
  case "$(uname -m)" in
    x86_64) has aarch64-linux-gnu-g++ || echo g++-aarch64-linux-gnu; has qemu-aarch64 || echo qemu-user ;;
    aarch64) has x86_64-linux-gnu-g++ || echo g++-x86-64-linux-gnu; has qemu-x86_64 || echo qemu-user ;;
  esac
}

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }
