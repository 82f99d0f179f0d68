#!/usr/bin/env bash
# Prints the objectmatcher's generated facts (src/kube-facts.generated.ts) on stdout, or writes them
# there with --write (`npm run generate:matcher`). The generator (generator/, Go) is built once into a
# cache folder keyed by a digest of its sources and the Go version, so a second call takes milliseconds.
#
# Fails fast, with one line on stderr, when Go or the module proxy is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)

command -v go >/dev/null 2>&1 || { echo "objectmatcher: Go is not installed (need go on PATH to generate the built-in kinds' facts)" >&2; exit 2; }
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
case "$(go env GOPROXY)" in off|"") echo "objectmatcher: GOPROXY is off; the generator's modules come from the Go module proxy" >&2; exit 2;; esac

digest=$(cat "$here/generator/go.mod" "$here/generator/go.sum" "$here"/generator/*.go | sha256sum | cut -c1-16)
bin="${DRIFTLESS_BIN_CACHE:-$root/.local/bin}/objectmatcher-facts-$digest-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
if [ ! -x "$bin" ]; then
  mkdir -p "$(dirname "$bin")"
  echo "objectmatcher: building the fact generator (a cold build takes a minute) ..." >&2
  (cd "$here/generator" && go build -trimpath -o "$bin.partial.$$" .)
  mv "$bin.partial.$$" "$bin"
fi
if [ "${1:-}" = "--write" ]; then
  "$bin" > "$here/src/kube-facts.generated.ts.partial"
  mv "$here/src/kube-facts.generated.ts.partial" "$here/src/kube-facts.generated.ts"
else
  "$bin"
fi
