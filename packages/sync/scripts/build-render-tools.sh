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
# "-caps": helm stamped with the Kubernetes version its client-go targets (below); older folders lack it.
out="${DRIFTLESS_BIN_CACHE:-$root/.local/bin}/render-kustomize-$kustomize_version-helm-$helm_version-caps-$go_version-$platform"

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

# helm's Makefile stamps .Capabilities.KubeVersion from the client-go it is built with (v0.37 -> v1.37);
# unstamped, every chart is told the cluster runs v1.20.0, so `kubeVersion: >=1.21` charts refuse to render
# and version-gated templates pick APIs the cluster no longer serves (policy/v1beta1).
helm_gomod=$(go mod download -json "helm.sh/helm/v3@$helm_version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
client_go=$(sed -n 's/^[[:space:]]*k8s\.io\/client-go v\([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p' "$helm_gomod" | head -n 1)
[ -n "$client_go" ] || { echo "render tools: cannot read helm $helm_version's client-go version from $helm_gomod" >&2; exit 1; }
kube_major=$(( ${client_go% *} + 1 ))
kube_minor=${client_go#* }
kube_flags=""
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  kube_flags="$kube_flags -X $pkg.k8sVersionMajor=$kube_major -X $pkg.k8sVersionMinor=$kube_minor"
done

start=$(date +%s)
build "kustomize $kustomize_version" kustomize "sigs.k8s.io/kustomize/kustomize/v5@$kustomize_version" "-s -w"
# helm reads its own version and the Kubernetes version it reports from ldflags, as its Makefile sets them.
build "helm $helm_version" helm "helm.sh/helm/v3/cmd/helm@$helm_version" \
  "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean$kube_flags"
rm -f "$log"
rm -rf "$out" && mv "$out.partial" "$out"
echo "render tools: kustomize and helm built in $(( $(date +%s) - start ))s" >&2
echo "$out"
