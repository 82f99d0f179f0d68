# shellcheck shell=bash
# Shared helpers of the image scripts (scripts/image/*.sh). Sourced, not run.
# Images are built with buildah and kept in containers-storage (/var/lib/containers/storage as root);
# nothing is ever pulled: every FROM is an image these scripts made from Debian packages.

# shellcheck source=scripts/lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/setup.sh"

# buildah builds, podman runs (the read-only check in the test), mmdebstrap makes Debian root filesystems.
ensure_image_tools() {
  ensure_commands buildah:buildah podman:podman mmdebstrap:mmdebstrap runc:runc newuidmap:uidmap
}

# image_exists REF: whether containers-storage holds REF.
image_exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# inputs_hash FILE... [-- STRING...]: a short hash of files' contents and extra strings, the tag of a cached image.
inputs_hash() {
  local files=() strings=()
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; strings=("$@"); break; fi
    files+=("$1"); shift
  done
  { sha256sum "${files[@]}" | cut -d' ' -f1; printf '%s\n' "${strings[@]}"; } | sha256sum | cut -c1-16
}

# debian_rootfs OUT_TAR PACKAGES [MMDEBSTRAP_ARGS...]: a minimal Debian bookworm root filesystem as a tarball,
# with the packages named (comma-separated), without documentation, man pages or apt lists (as the
# slim images are).
debian_rootfs() {
  local out="$1" packages="$2"; shift 2
  # The machine's own Debian sources when it is bookworm (its mirror and keyring), else mmdebstrap's default.
  local sources=()
  if [ -f /etc/apt/sources.list.d/debian.sources ] && grep -q '^Suites:.*bookworm' /etc/apt/sources.list.d/debian.sources; then
    sources=(/etc/apt/sources.list.d/debian.sources)
  fi
  local log; log=$(mktemp)
  # The hooks' $1 (the root filesystem) is mmdebstrap's to expand, hence single quotes.
  # shellcheck disable=SC2016
  # dpkg without fsync: the tree is a throwaway until it is packed into the tarball.
  if ! SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0} mmdebstrap --quiet --variant=minbase --include="$packages" \
    --dpkgopt=force-unsafe-io \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/etc/machine-id' \
    "$@" bookworm "$out" "${sources[@]}" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; return 1
  fi
  rm -f "$log"
}

# import_rootfs TAR REF [buildah config args...]: REF, an image holding TAR's files with the given configuration.
import_rootfs() {
  local tar="$1" ref="$2"; shift 2
  local ctr; ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$tar" / >/dev/null
  [ $# -eq 0 ] || buildah config "$@" "$ctr"
  buildah commit --quiet --rm "$ctr" "$ref" >/dev/null
}
