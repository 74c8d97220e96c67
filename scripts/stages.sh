# Timed stages for scripts/test.sh (sourced, not run).
#
#   stage NAME COMMAND...      runs COMMAND in the foreground (its output
#                              streams), timed; a failure ends the script.
#   stage_bg NAME COMMAND...   starts COMMAND in the background, beside what
#                              follows; its output is kept until stage_wait.
#   stage_wait NAME...         waits for background stages, prints their
#                              output, and fails if one of them failed.
#
# COMMAND may be a shell function; it runs with `set -euo pipefail`, so its
# first failing command fails the stage. Stages nest (a background stage may
# run stages of its own). When the script exits, for whatever reason, the
# table of stage times is printed (each stage's wall time, when it started,
# and the total), background stages still running are stopped, and the
# output of those that failed or were stopped is printed.

STAGE_DIR=$(mktemp -d -t acc-stages-XXXXXX)
STAGE_T0=$EPOCHREALTIME
# Background stages get process groups of their own, so that stopping one
# stops everything it started.
set -m

# The current time in microseconds since the epoch.
_stage_us() {
  local t=$EPOCHREALTIME
  echo "${t//[.,]/}"
}

# A duration in microseconds as minutes and seconds, e.g. 4m05s.
_stage_fmt() {
  local s=$(($1 / 1000000))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

_stage_begin() {
  [[ $1 =~ ^[a-z0-9-]+$ ]] || { echo "stages: bad stage name '$1'" >&2; return 2; }
  _stage_us >"$STAGE_DIR/$1.start"
}

_stage_end() {
  echo "$(_stage_us) $2" >"$STAGE_DIR/$1.end"
}

stage() {
  local name=$1 rc
  shift
  _stage_begin "$name"
  echo "==> stage $name: $*"
  set +e
  (
    set -euo pipefail
    "$@"
  )
  rc=$?
  set -e
  _stage_end "$name" "$rc"
  if ((rc != 0)); then
    echo "==> stage $name failed (exit $rc)" >&2
  fi
  return "$rc"
}

stage_bg() {
  local name=$1
  shift
  _stage_begin "$name"
  echo "==> stage $name (in the background): $*"
  (
    set +e
    (
      set -euo pipefail
      "$@"
    ) >"$STAGE_DIR/$name.log" 2>&1 </dev/null
    rc=$?
    _stage_end "$name" "$rc"
    exit "$rc"
  ) &
  echo $! >"$STAGE_DIR/$name.pid"
}

stage_wait() {
  local name rc failed=()
  for name in "$@"; do
    rc=0
    wait "$(<"$STAGE_DIR/$name.pid")" || rc=$?
    rm -f "$STAGE_DIR/$name.pid"
    echo "==> stage $name (ran in the background) printed:"
    cat "$STAGE_DIR/$name.log"
    if ((rc != 0)); then
      echo "==> stage $name failed (exit $rc)" >&2
      failed+=("$name")
    fi
  done
  ((${#failed[@]} == 0))
}

# The table of stage times, in the order the stages started.
stage_report() {
  local now total start end rc line name status
  now=$(_stage_us)
  echo
  echo "Stage times (wall clock; 'from' is when the stage started):"
  for line in $(for f in "$STAGE_DIR"/*.start; do
    [ -e "$f" ] || continue
    n=${f##*/}
    echo "$(<"$f"):${n%.start}"
  done | sort -n); do
    start=${line%%:*}
    name=${line#*:}
    if [ -e "$STAGE_DIR/$name.end" ]; then
      read -r end rc <"$STAGE_DIR/$name.end"
      if ((rc == 0)); then status=ok; else status="failed (exit $rc)"; fi
    else
      end=$now
      status="stopped"
    fi
    printf '  %-20s %8s   from %7s   %s\n' "$name" "$(_stage_fmt $((end - start)))" \
      "+$(_stage_fmt $((start - ${STAGE_T0//[.,]/})))" "$status"
  done
  total=$((now - ${STAGE_T0//[.,]/}))
  printf '  %-20s %8s\n' total "$(_stage_fmt "$total")"
}

_stage_exit() {
  local rc=$? f name
  for f in "$STAGE_DIR"/*.pid; do
    [ -e "$f" ] || continue
    name=${f##*/}
    name=${name%.pid}
    # Still running: the script is ending early. Stop it, and show what it printed.
    kill -TERM -- "-$(<"$f")" 2>/dev/null || true
    wait "$(<"$f")" 2>/dev/null || true
    echo "==> stage $name was stopped; it had printed:" >&2
    tail -n 200 "$STAGE_DIR/$name.log" >&2 || true
  done
  stage_report
  rm -rf "$STAGE_DIR"
  exit "$rc"
}
trap _stage_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
