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
# the processor time it used, and the totals), background stages still
# running are stopped, and the output of those that failed or were stopped
# is printed.

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

# A duration in microseconds as minutes and seconds (rounded), e.g. 4m05s.
_stage_fmt() {
  local s=$((($1 + 500000) / 1000000))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# Sets REPLY to the processor time (user + system, in microseconds) of this
# shell's finished children, from the `times` builtin (which must run in
# this shell: in a command substitution's subshell it counts nothing).
_stage_cpu_us() {
  local self children user sys m s t
  times >"$STAGE_DIR/.times.$BASHPID"
  { read -r self; read -r user sys; } <"$STAGE_DIR/.times.$BASHPID"
  rm -f "$STAGE_DIR/.times.$BASHPID"
  children=0
  for t in "$user" "$sys"; do
    m=${t%%m*}
    s=${t#*m}
    s=${s%s}
    s=${s//[.,]/}
    children=$((children + m * 60000000 + 10#$s * 1000))
  done
  REPLY=$children
}

_stage_begin() {
  [[ $1 =~ ^[a-z0-9-]+$ ]] || { echo "stages: bad stage name '$1'" >&2; return 2; }
  _stage_us >"$STAGE_DIR/$1.start"
}

# Records the end of stage $1: its exit status $2 and processor time $3.
_stage_end() {
  echo "$(_stage_us) $2 $3" >"$STAGE_DIR/$1.end"
}

stage() {
  local name=$1 rc
  shift
  _stage_begin "$name"
  echo "==> stage $name: $*"
  set +e
  # The stage's processor time is counted in a subshell of its own: this
  # shell's own count also takes in background stages that end meanwhile.
  (
    (
      set -euo pipefail
      "$@"
    )
    rc=$?
    _stage_cpu_us
    _stage_end "$name" "$rc" "$REPLY"
    exit "$rc"
  )
  rc=$?
  set -e
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
    _stage_cpu_us
    _stage_end "$name" "$rc" "$REPLY"
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

# The table of stage times, in the order the stages started: wall time, when
# the stage started (from the script's start), processor time (user +
# system, of the stage's finished processes; a nested stage's time is also
# in its parent's), and the totals, with how busy the machine's cores were.
stage_report() {
  local now t0 total start end rc cpu line name status f n
  now=$(_stage_us)
  t0=${STAGE_T0//[.,]/}
  echo
  echo "Stage times (wall clock, from the start, processor time):"
  for line in $(for f in "$STAGE_DIR"/*.start; do
    [ -e "$f" ] || continue
    n=${f##*/}
    echo "$(<"$f"):${n%.start}"
  done | sort -n); do
    start=${line%%:*}
    name=${line#*:}
    cpu=
    if [ -e "$STAGE_DIR/$name.end" ]; then
      read -r end rc cpu <"$STAGE_DIR/$name.end"
      if ((rc == 0)); then status=ok; else status="failed (exit $rc)"; fi
    else
      end=$now
      status=stopped
    fi
    printf '  %-18s %8s   from %7s   cpu %8s   %s\n' "$name" "$(_stage_fmt $((end - start)))" \
      "+$(_stage_fmt $((start - t0)))" "${cpu:+$(_stage_fmt "$cpu")}" "$status"
  done
  total=$((now - t0))
  _stage_cpu_us
  printf '  %-18s %8s                   cpu %8s   (%d%% of %d cores)\n' total "$(_stage_fmt "$total")" \
    "$(_stage_fmt "$REPLY")" $((REPLY * 100 / (total * $(nproc) + 1))) "$(nproc)"
}

_stage_exit() {
  local rc=$? f name end status
  # No job notices ("Terminated") for the stages stopped below.
  set +m
  for f in "$STAGE_DIR"/*.pid; do
    [ -e "$f" ] || continue
    name=${f##*/}
    name=${name%.pid}
    if [ -e "$STAGE_DIR/$name.end" ]; then
      # Ended, but the script ended before waiting for it: show its output
      # if it failed.
      read -r end status _ <"$STAGE_DIR/$name.end"
      ((status == 0)) && continue
      echo "==> stage $name failed (exit $status); it printed:" >&2
    else
      # Still running: stop it, and show what it printed.
      kill -TERM -- "-$(<"$f")" 2>/dev/null || true
      wait "$(<"$f")" 2>/dev/null || true
      echo "==> stage $name was stopped; it had printed:" >&2
    fi
    tail -n 200 "$STAGE_DIR/$name.log" >&2 || true
  done
  stage_report
  rm -rf "$STAGE_DIR"
  exit "$rc"
}

trap _stage_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
