#!/usr/bin/env bash
# Installs every Debian 12 package that building, running and testing the
# workbench needs. Idempotent; run as root (or it uses sudo when present).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build git pkg-config clang-format
  # compiler cache: tests/run_all.sh's engine-only build reuses the release
  # build's objects through it
  ccache
  # Qt 6: Widgets, Sql (+ SQLite driver), Concurrent, Network, Test, HttpServer
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-httpserver-dev
  qt6-websockets-dev libgl-dev
  # remote targets' API keys in the desktop's secret store; the GUI tests
  # run a private GNOME Keyring in their own D-Bus session
  qtkeychain-qt6-dev gnome-keyring dbus
  # charts
  libqcustomplot-dev libqcustomplot2.1-qt6
  # SQLite C API for the run log; JSON for the CLI and exports
  libsqlite3-dev sqlite3 nlohmann-json3-dev libssl-dev
  # HTTP server of `workbench-cli serve` (docs/server.md: why this library)
  libcpp-httplib-dev curl
  # Unicode regular expressions for the BPE pre-tokenizers
  libpcre2-dev
  # Vulkan: loader, headers, shader compiler, CPU driver (lavapipe), validation
  libvulkan-dev glslang-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  # headless GUI tests and screenshots
  xvfb xauth
  # packaging checks
  dpkg-dev lintian desktop-file-utils file help2man
  # independent checks in tests (csv/json readers of another language), the
  # Jinja2 oracle that writes the chat template tests' expected files, and a
  # float64 numpy forward pass of the architectures; prometheus_client's
  # parser reads the server's /metrics text (tests/metrics_export)
  python3 python3-jinja2 python3-numpy python3-prometheus-client
  # the load test's https check makes a self-signed certificate (tests/load)
  openssl
  # fuzzing in CI (tests/fuzz/run_ci.sh): clang with libFuzzer and the
  # sanitizer runtimes
  clang-14 libclang-rt-14-dev
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The server tests' real OpenAI client (tests/server/node) needs Node and
# npm: Debian's, unless a node is already on the PATH.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

# The `openai` npm package at the version package-lock.json pins, for the
# server tests (they are skipped without it).
install_node_modules() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/server/node"
  if [ -f "$dir/package-lock.json" ]; then
    echo "setup: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  install_node_modules
  exit 0
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_node_modules
