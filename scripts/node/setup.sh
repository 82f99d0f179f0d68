#!/usr/bin/env bash
# Installs what `npm run cluster:up -- --with-node` needs on a fresh machine (Debian packages, Go, the
# node's binaries) and says nothing when all of it is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/setup.sh
. scripts/lib/setup.sh

ensure_go
ensure_node
