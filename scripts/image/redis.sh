#!/usr/bin/env bash
# The Redis image manifests/redis.yaml names (redis:7.0-bookworm), made locally from Debian bookworm's
# redis-server where no registry can be reached: the same Redis release (7.0) on the same Debian release
# as the official tag, and the one every test runs against. It has what the manifest's command uses
# (sh, sed, printf, redis-server, redis-cli) and runs as any user (the manifest sets 999).
#
# Cached: rebuilt only when this script changes (its hash is a label, compared before building).
# Prints the image reference on its last line.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/image/lib.sh
. scripts/image/lib.sh

ref=docker.io/library/redis:7.0-bookworm
packages=redis-server
hash=$(inputs_hash scripts/image/redis.sh scripts/image/lib.sh -- "$packages")
if image_exists "$ref" &&
  [ "$(buildah inspect --type image --format '{{index .ImageAnnotations "io.driftless.inputs"}}' "$ref" 2>/dev/null)" = "$hash" ]; then
  echo "$ref"; exit 0
fi

ensure_image_tools
start=$(date +%s)
echo "image redis: making $ref from Debian's $packages ..." >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The hooks' $1 (the root filesystem) is mmdebstrap's to expand, hence single quotes.
# shellcheck disable=SC2016
debian_rootfs "$work/rootfs.tar" "$packages" \
  --customize-hook='mkdir -p "$1/data" && chmod 0777 "$1/data"' \
  --customize-hook='chroot "$1" redis-server --version >/dev/null'
import_rootfs "$work/rootfs.tar" "$ref" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --workingdir /data --port 6379 --user 999:999 --cmd redis-server \
  --annotation "io.driftless.inputs=$hash" \
  --label org.opencontainers.image.description="Redis from Debian bookworm's redis-server"
echo "image redis: made in $(($(date +%s) - start))s" >&2
echo "$ref"
