#!/usr/bin/env bash
# `npm run demo` (and `npm run demo -- stop`): installs what the demo needs on a fresh machine, then
# runs scripts/demo/demo.ts. Needs Node and npm (to run `npm run`); everything else it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "stop" ]; then
  PATH="$PWD/node_modules/.bin:$PATH" exec node scripts/demo/demo.ts stop
fi

# shellcheck source=lib/setup.sh
. scripts/lib/setup.sh

# Redis for the queues, git for the repositories, curl for Go's download; Go builds the control plane
# (once; cached in .local/bin); npm brings Node 24 and the project's packages.
ensure_commands redis-server:redis-server git:git curl:curl
ensure_go
ensure_node_modules
export PATH="$PWD/node_modules/.bin:$PATH"
ensure_git_identity demo

exec node scripts/demo/demo.ts
