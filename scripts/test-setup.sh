#!/usr/bin/env bash
# `npm test`'s first step (pretest): installs and builds what the tests need on a fresh machine
# (Debian packages, Go, the project's packages, the local control plane, kustomize and helm, the matcher's
# fact generator) and says nothing when all of it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/setup.sh
. scripts/lib/setup.sh

ensure_commands redis-server:redis-server git:git openssl:openssl sshd:openssh-server ssh:openssh-client \
  prometheus:prometheus curl:curl docker-registry:docker-registry htpasswd:apache2-utils tinyproxy:tinyproxy \
  chromium:chromium
ensure_go
ensure_node_modules
ensure_git_identity test
# Cached in .local/bin after the first build; prints progress while it builds.
bash packages/local-cluster/scripts/build.sh >/dev/null
# The node (kubelet, kube-proxy, kube-scheduler, containerd, CNI) that the node test starts.
ensure_node
# kustomize and helm, which render a sync directory holding a kustomization: cached like the control plane.
bash packages/sync/scripts/build-render-tools.sh >/dev/null
# The objectmatcher's fact generator, which a unit test runs: built here, outside any test's timeout.
bash packages/objectmatcher/scripts/generate-facts.sh >/dev/null
