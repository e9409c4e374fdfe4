#!/usr/bin/env bash
# run_multi_worker.sh MPIEXEC DRIVER MODE WORKDIR: the multi-worker checks of
# multi_worker_driver.cc under `mpirun -np 2` on this host (loopback only).
#   equivalence  both ranks end with the single-process weights, identical after every epoch
#   custom_step  a custom nn::TrainStep under the strategy: the same, for its variables
#   kill         rank 1 dies (SIGKILL) in epoch 1: rank 0 must report an error naming rank 1
#                within the collective timeout, never hang
#   resume       the same job killed in epoch 1, then restarted with --resume, ends with the
#                bits of an uninterrupted run
# mpirun's flags (plugins/mpi/README.md): root needs the two OMPI_ALLOW_* variables; two
# ranks on two cores need --oversubscribe only when cores are counted short; containers often
# block vader's single-copy mechanism. When a rank dies, mpirun kills the others within ~1 s
# unless --enable-recovery is given, so the runs that kill a rank use it — and then mpirun's
# exit status says nothing (always 0), so those runs are judged by the RANK0_ERROR line.
set -uo pipefail
MPIEXEC=$1 DRIVER=$2 MODE=$3 WORK=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DLRT_COLLECTIVE_TIMEOUT=${DLRT_COLLECTIVE_TIMEOUT:-5}
MPIRUN=("$MPIEXEC" -np 2 --oversubscribe --mca btl_vader_single_copy_mechanism none)
MPIRUN_SURVIVE=("${MPIRUN[@]}" --enable-recovery)
rm -rf "$WORK" && mkdir -p "$WORK"

fail() { echo "FAIL: $*"; exit 1; }

case "$MODE" in
  equivalence|custom_step)
    out=$("${MPIRUN[@]}" "$DRIVER" "$MODE" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "mpirun exited $rc"
    grep -q RANK0_OK <<<"$out" && grep -q RANK1_OK <<<"$out" || fail "a rank did not pass"
    ;;
  kill)
    start=$(date +%s)
    out=$("${MPIRUN_SURVIVE[@]}" "$DRIVER" train "$WORK/ck.safetensors" --die 1:1:2 2>&1)
    took=$(( $(date +%s) - start ))
    echo "$out"
    grep -q "RANK0_ERROR: .*rank 1" <<<"$out" || fail "rank 0 did not report rank 1's death"
    [ $took -lt 60 ] || fail "took ${took}s"
    echo "rank 0 reported the dead rank after ${took}s (timeout ${DLRT_COLLECTIVE_TIMEOUT}s)"
    ;;
  resume)
    "${MPIRUN[@]}" "$DRIVER" train "$WORK/whole.safetensors" >"$WORK/whole.log" 2>&1 \
      || { cat "$WORK/whole.log"; fail "the uninterrupted run failed"; }
    "${MPIRUN_SURVIVE[@]}" "$DRIVER" train "$WORK/ck.safetensors" --die 1:1:2 \
      >"$WORK/killed.log" 2>&1
    cat "$WORK/killed.log"
    grep -q "RANK0_ERROR" "$WORK/killed.log" || fail "the killed run did not fail on rank 0"
    out=$("${MPIRUN[@]}" "$DRIVER" train "$WORK/ck.safetensors" --resume 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "the resumed run exited $rc"
    grep -q "resumed after epoch 1" <<<"$out" || fail "did not resume after epoch 1"
    "$DRIVER" same "$WORK/whole.safetensors" "$WORK/ck.safetensors" || fail "resumed != whole"
    ;;
  *) fail "unknown mode $MODE" ;;
esac
echo PASS
