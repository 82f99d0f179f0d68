#!/usr/bin/env bash
# Builds kustomize and helm (the renderers of a sync directory holding a kustomization.yaml) from the Go
# module proxy into a cache folder keyed by their versions, the Go version and the platform, so a second
# call is instant and offline. Prints the folder that holds the binaries on its last line.
#
# Fails fast, with one line on stderr, when Go or the module proxy is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
kustomize_version=$(cat "$here/versions/kustomize")
helm_version=$(cat "$here/versions/helm")

command -v go >/dev/null 2>&1 || { echo "render tools: Go is not installed (need go >= 1.26 on PATH to build kustomize and helm)" >&2; exit 2; }
go_version=$(go env GOVERSION)
platform="$(go env GOOS)-$(go env GOARCH)"
out="${DRIFTLESS_BIN_CACHE:-$root/.local/bin}/render-kustomize-$kustomize_version-helm-$helm_version-$go_version-$platform"

if [ -x "$out/kustomize" ] && [ -x "$out/helm" ]; then
  echo "$out"; exit 0
fi
rm -rf "$out.partial" && mkdir -p "$out.partial"

# Upstream releases are static builds; GOTOOLCHAIN=local so no toolchain is ever downloaded.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=
case "$(go env GOPROXY)" in off|"") echo "render tools: GOPROXY is off; kustomize and helm are built from the Go module proxy" >&2; exit 2;; esac
parallel=${DRIFTLESS_GO_BUILD_P:-$(nproc)}

# `go install module/cmd@version` builds with the module's own go.mod (no replace directives needed by
# either tool), printing how far along it is every 15 s; Go's own output goes to a log shown on failure.
log="$out.partial/build.log"
# shellcheck source=../../../scripts/lib/go-build-progress.sh
. "$root/scripts/lib/go-build-progress.sh"
build() {
  local label="$1" bin="$2" pkg="$3" flags="$4"
  echo "render tools: building $label (a cold build takes a few minutes on 2 cores) ..." >&2
  GOBIN="$out.partial" follow_go_build "render tools" "$label" "$log" "" \
    go install -v -p "$parallel" -trimpath -ldflags "$flags" "$pkg"
  [ -x "$out.partial/$bin" ] || { echo "render tools: building $label left no $bin binary:" >&2; tail -n 40 "$log" >&2; exit 1; }
}

start=$(date +%s)
build "kustomize $kustomize_version" kustomize "sigs.k8s.io/kustomize/kustomize/v5@$kustomize_version" "-s -w"
# helm reads its version from ldflags (its Makefile sets the same variables).
build "helm $helm_version" helm "helm.sh/helm/v3/cmd/helm@$helm_version" \
  "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
rm -f "$log"
rm -rf "$out" && mv "$out.partial" "$out"
echo "render tools: kustomize and helm built in $(( $(date +%s) - start ))s" >&2
echo "$out"
