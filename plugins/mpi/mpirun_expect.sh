#!/bin/sh
# mpirun_expect.sh [--exit-zero] PATTERN... -- COMMAND [ARG...]
#
# Runs COMMAND (an mpirun line), shows its output, and passes when every PATTERN (an
# extended regular expression, grep -E) matches some line of it and no line says
# "DRIVER_FAIL". With --exit-zero, COMMAND must also exit 0.
#
# Why not the exit status alone: under --enable-recovery (needed so that a dead rank does not
# make mpirun kill the survivors before they report) Open MPI 4.1's mpirun exits 0 whatever
# the ranks did, so the ranks' own lines are the only trustworthy verdict.
# COMMAND runs under `timeout` (45 s) as well as CTest's TIMEOUT, so a hang ends as a failure.
exit_zero=0
if [ "$1" = "--exit-zero" ]; then exit_zero=1; shift; fi
patterns_file=$(mktemp) || exit 1
out=$(mktemp) || exit 1
trap 'rm -f "$patterns_file" "$out"' EXIT
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  printf '%s\n' "$1" >>"$patterns_file"
  shift
done
[ "$1" = "--" ] || { echo "usage: $0 [--exit-zero] PATTERN... -- COMMAND..."; exit 2; }
shift

if command -v timeout >/dev/null 2>&1; then
  timeout -k 5 45 "$@" >"$out" 2>&1
else
  "$@" >"$out" 2>&1
fi
rc=$?
cat "$out"
echo "---- mpirun_expect: command exited $rc"

status=0
if [ $exit_zero -eq 1 ] && [ $rc -ne 0 ]; then
  echo "mpirun_expect: FAILED: the command exited $rc, expected 0"
  status=1
fi
if grep -q "DRIVER_FAIL" "$out"; then
  echo "mpirun_expect: FAILED: a rank reported DRIVER_FAIL"
  status=1
fi
while IFS= read -r pattern; do
  if ! grep -Eq -- "$pattern" "$out"; then
    echo "mpirun_expect: FAILED: no line matches: $pattern"
    status=1
  fi
done <"$patterns_file"
[ $status -eq 0 ] && echo "mpirun_expect: passed"
exit $status
