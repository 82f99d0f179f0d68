#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager from the Go module proxy into a cache folder
# keyed by Kubernetes version, etcd version, Go version and platform, so a second call is instant.
# `build.sh node` builds the node's kubelet, kube-scheduler and kube-proxy instead, into a folder of their
# own (with the pod sandbox's pause binary), so that a control plane without a node never pays for them.
# Prints the folder that holds the binaries on its last line.
#
# Fails fast, with one line on stderr, when Go or the module proxy is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
kube_version=$(cat "$here/versions/kubernetes")
etcd_version=$(cat "$here/versions/etcd")

command -v go >/dev/null 2>&1 || { echo "local-cluster: Go is not installed (need go >= 1.26 on PATH to build the control plane)" >&2; exit 2; }
go_version=$(go env GOVERSION)
platform="$(go env GOOS)-$(go env GOARCH)"
what=${1:-control-plane}
case "$what" in
  control-plane)
    out="${DRIFTLESS_BIN_CACHE:-$root/.local/bin}/kube-$kube_version-etcd-$etcd_version-$go_version-$platform"
    wanted=(kube-apiserver kube-controller-manager etcd);;
  node)
    out="${DRIFTLESS_BIN_CACHE:-$root/.local/bin}/node-$kube_version-$go_version-$platform"
    wanted=(kubelet kube-scheduler kube-proxy pause);;
  *) echo "local-cluster: build.sh builds 'control-plane' or 'node', not '$what'" >&2; exit 2;;
esac

have_all=true
for binary in "${wanted[@]}"; do [ -x "$out/$binary" ] || have_all=false; done
if $have_all; then echo "$out"; exit 0; fi
mkdir -p "$out.partial"

# Upstream builds these statically with no tags; GOTOOLCHAIN=local so no toolchain is ever downloaded.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
proxy=$(go env GOPROXY)
case "$proxy" in off|"") echo "local-cluster: GOPROXY is off; the control plane is built from the Go module proxy" >&2; exit 2;; esac

# -p: parallelism; each compile of the apiserver can take ~2 GiB, so honour a lower value when memory is tight.
parallel=${DRIFTLESS_GO_BUILD_P:-$(nproc)}
version_pkg=k8s.io/component-base/version
minor=${kube_version#v1.}; minor=${minor%%.*}
ldflags="-s -w -X $version_pkg.gitVersion=$kube_version -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean -X $version_pkg.buildDate=1970-01-01T00:00:00Z"

# Builds packages in a module folder, printing how far along it is every 15 s; Go's own output (module
# downloads, the package list) goes to a log that is shown only when the build fails.
log="$out.partial/build.log"
# shellcheck source=../../../scripts/lib/go-build-progress.sh
. "$root/scripts/lib/go-build-progress.sh"
build() {
  local label="$1" dir="$2" flags="$3" target="$4"; shift 4
  if ! (cd "$dir" && go mod download) >"$log" 2>&1; then
    echo "local-cluster: downloading the modules of $label failed:" >&2; cat "$log" >&2; exit 1
  fi
  local total; total=$(cd "$dir" && go list -deps "$@" 2>>"$log" | wc -l)
  echo "local-cluster: building $label ($total packages; a cold build takes several minutes on 2 cores) ..." >&2
  (cd "$dir" && follow_go_build local-cluster "$label" "$log" "$total" \
    go build -v -p "$parallel" -trimpath -ldflags "$flags" -o "$target" "$@")
}

start=$(date +%s)
if [ "$what" = node ]; then
  build "kubelet, kube-scheduler and kube-proxy $kube_version" "$here/go/kube" "$ldflags" "$out.partial/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy
  # The sandbox image's only file; it is ours, so the node needs no registry.
  (cd "$here/go/pause" && go build -trimpath -ldflags "-s -w" -o "$out.partial/pause" .)
else
  build "etcd $etcd_version ($go_version)" "$here/go/etcd" "-s -w" "$out.partial/etcd" go.etcd.io/etcd/server/v3
  build "kube-apiserver and kube-controller-manager $kube_version" "$here/go/kube" "$ldflags" "$out.partial/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
fi
rm -f "$log"
rm -rf "$out" && mv "$out.partial" "$out"
echo "local-cluster: $what built in $(( $(date +%s) - start ))s" >&2
echo "$out"
