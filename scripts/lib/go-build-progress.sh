# Sourced by the scripts that build Go tools (the control plane, kustomize and helm). Not run.
#
# follow_go_build PREFIX LABEL LOG TOTAL COMMAND...: runs a `go build -v` / `go install -v` COMMAND,
# keeps Go's own output in LOG (shown only when the build fails), and says how many packages it has
# compiled every 15 s (of TOTAL, when known). Exits the calling script when the build fails.
follow_go_build() {
  local prefix="$1" label="$2" log="$3" total="$4"; shift 4
  local began=$SECONDS compiled=0 said=$SECONDS line
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    case "$line" in
      "build exit "*) [ "${line#build exit }" = 0 ] || { echo "$prefix: building $label failed:" >&2; tail -n 40 "$log" >&2; exit 1; } ;;
      *" "*|"#"*) ;; # download and compiler messages, not package names
      *) compiled=$((compiled + 1)) ;;
    esac
    if (( SECONDS - said >= 15 )); then
      echo "$prefix: $label: $compiled${total:+ of $total} packages compiled so far, cached ones not counted ($((SECONDS - began)) s)" >&2
      said=$SECONDS
    fi
  done < <(if "$@" 2>&1; then echo "build exit 0"; else echo "build exit $?"; fi)
  echo "$prefix: built $label in $((SECONDS - began)) s" >&2
}
