#!/usr/bin/env bash
# tools/gpu-check.sh: every check that needs the GPU machine, in one run, with a table at the end.
#
# Why one script: the GPU machine (one H200) is lent for about 15 minutes per session, start-up
# included, so everything is built and tested here first and the machine only runs this. See
# ../shared/device/README.md and docs/benchmarks.md ("GPU checks").
#
# usage, from the project root:
#   source .devrun/env.sh; bash tools/gpu-check.sh [BIN] [--data DIR]
#
#   BIN         folder with dlprobe, dlbench and the test executables. Default: the packed
#               build (.devrun/build/bin, where ../shared/device/pack.sh puts it; .devrun/bin is
#               accepted too), else $DLRT_BUILD_DIR/bin (set by env.sh), else build/bin.
#   --data DIR  Fashion-MNIST in MNIST's file layout (or env DLRT_DATA). Default: .devrun/data
#               if it exists. Without data the two `dlbench train` steps are skipped: the GPU
#               machine has no data set unless it is carried over in .devrun/data.
#   OUT         env: folder for the logs and JSON results (default ./gpu-check-out).
#   GPU_CHECK_TIMEOUT_SCALE  env: multiplies every step's timeout (e.g. 0.5 on a short lease).
#
# Steps, in order; each has its own `timeout`, and a failure does not stop the ones after it:
#   1. dlprobe, dlprobe --json (> $OUT/dlprobe.json), dlprobe --ops (the op x device matrix);
#   2. the GPU-labelled gtest executables, run directly (CTest files hold the absolute paths
#      of the machine that built them, so ctest does not work there);
#   3. the conformance suite restricted to the CUDA device (tests named Conformance/<op>.cuda_0);
#   3b. mirrored training on the GPU: dlrt_nn_test NnMirroredGpu* (two logical GPUs; one GPU via NCCL);
#   4. the reference workload: dlbench train on GPU:0 with and without CUDA Graphs (--no-capture)
#      and on CPU:0 (16 threads), dlbench ops on GPU:0;
#   5. the table: step, status (pass / FAIL / skip), seconds, one key figure.
#
# Exit status: 0 when every step that could run passed (skips do not count), 1 otherwise.
# Without a GPU (e.g. on a development machine) the script still runs: the GPU steps report
# "no GPU" instead of failing, which is how the script itself is checked before a lease.

set -uo pipefail   # not -e: a failing step must not stop the steps after it

# ---- arguments -------------------------------------------------------------------------
BIN=""
DATA="${DLRT_DATA:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --data) DATA="${2:?--data needs a folder}"; shift 2 ;;
    --data=*) DATA="${1#--data=}"; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) BIN="$1"; shift ;;
  esac
done
if [ -z "$BIN" ]; then
  for cand in .devrun/build/bin .devrun/bin "${DLRT_BUILD_DIR:+$DLRT_BUILD_DIR/bin}" build/bin; do
    if [ -n "$cand" ] && [ -d "$cand" ]; then BIN="$cand"; break; fi
  done
fi
if [ -z "$BIN" ] || [ ! -d "$BIN" ]; then
  echo "gpu-check: no binaries folder (tried .devrun/build/bin, .devrun/bin, build/bin); pass one" >&2
  exit 1
fi
BIN=$(cd "$BIN" && pwd)
if [ -z "$DATA" ] && [ -d .devrun/data ]; then DATA=.devrun/data; fi
OUT="${OUT:-./gpu-check-out}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SCALE="${GPU_CHECK_TIMEOUT_SCALE:-1}"

echo "gpu-check: BIN=$BIN OUT=$OUT DATA=${DATA:-<none>} $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
  | tee "$OUT/nvidia-smi.txt" || echo "gpu-check: no nvidia-smi"

# ---- bookkeeping -----------------------------------------------------------------------
# One row per step in these arrays; the table at the end prints them.
ROW_NAME=(); ROW_STATUS=(); ROW_SECS=(); ROW_FIG=()
FAILED=0
record() {  # record NAME STATUS SECONDS FIGURE
  ROW_NAME+=("$1"); ROW_STATUS+=("$2"); ROW_SECS+=("$3"); ROW_FIG+=("$4")
  [ "$2" = FAIL ] && FAILED=1
  printf '==> %s: %s (%ss) %s\n' "$1" "$2" "$3" "$4"
}
skip() { record "$1" skip 0 "$2"; }

# run_step NAME TIMEOUT_S STDOUT_FILE CMD...
# Runs CMD under `timeout`; its stderr (and its stdout when STDOUT_FILE is "-") is tee'd to
# $OUT/NAME.log as well as the terminal. With a STDOUT_FILE, stdout (a JSON report) goes
# there only. Sets RC (124: timed out) and SECS for the caller to judge and record.
run_step() {
  local name=$1 limit=$2 stdout=$3; shift 3
  local log="$OUT/$name.log" t0
  MISSING=0
  limit=$(awk -v t="$limit" -v s="$SCALE" 'BEGIN { printf "%d", (t * s < 1 ? 1 : t * s) }')
  echo; echo "==> $name: $* (timeout ${limit}s)"
  if [ ! -x "$1" ]; then
    echo "not found: $1" | tee "$log"; RC=127; SECS=0; MISSING=1; return
  fi
  t0=$(date +%s.%N)
  if [ "$stdout" = - ]; then
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log"
    RC=${PIPESTATUS[0]}
  else
    # 2>&1 >file: stderr goes to the pipe (the log), stdout to the JSON file.
    { timeout --kill-after=10 "$limit" "$@" 2>&1 >"$stdout"; } | tee "$log"
    RC=${PIPESTATUS[0]}
  fi
  SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then echo "TIMED OUT after ${limit}s" | tee -a "$log"; fi
}

# Why a step failed, for the table's figure column.
why() {
  if [ "$MISSING" = 1 ]; then echo "binary not found in BIN"; return; fi
  case "$RC" in
    124|137) echo "timed out" ;;
    127) echo "exit 127 (a shared library not found? see the log)" ;;
    *) echo "exit $RC" ;;
  esac
}

# json KEY FILE: one number from a dlbench/dlprobe JSON report (python3 if it is there; the
# GPU machine has it for cuDNN's packages). KEY is a Python expression on d, e.g. d["loss"].
json() {
  python3 - "$2" "$1" 2>/dev/null <<'EOF' || echo "?"
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {}, {"d": d})
print(f"{v:.4g}" if isinstance(v, float) else v)
EOF
}

# gtest_figure LOG: "P pass, F fail, S skip" from gtest's summary lines.
gtest_figure() {
  local ran passed failed skipped
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$1" | tail -n1)
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -n1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*, listed below.*/\1/p' "$1" | tail -n1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*, listed below.*/\1/p' "$1" | tail -n1)
  echo "${ran:-?} ran: ${passed:-0} pass, ${failed:-0} fail, ${skipped:-0} skip"
}

# ---- 1. dlprobe ------------------------------------------------------------------------
run_step dlprobe 60 - "$BIN/dlprobe"
if [ "$RC" = 0 ]; then
  record dlprobe pass "$SECS" "$(grep -c '^  /device:' "$OUT/dlprobe.log") devices"
else
  record dlprobe FAIL "$SECS" "$(why)"
fi

run_step dlprobe_json 60 "$OUT/dlprobe.json" "$BIN/dlprobe" --json
if [ "$RC" = 0 ]; then
  record dlprobe_json pass "$SECS" \
    "$(json '[x["attributes"]["model"] for x in d["devices"] if x["platform"]=="cuda"] or "no cuda device"' "$OUT/dlprobe.json")"
else
  record dlprobe_json FAIL "$SECS" "$(why)"
fi

# Is there a usable CUDA device? dlprobe --require answers with its exit status; the GPU
# steps below are skipped (or, for the self-skipping gtest executables, marked skip) without.
HAVE_GPU=0
if [ -x "$BIN/dlprobe" ] && timeout 60 "$BIN/dlprobe" -q --require cuda >"$OUT/require_cuda.log" 2>&1; then
  HAVE_GPU=1
fi
echo "gpu-check: usable CUDA device: $([ $HAVE_GPU = 1 ] && echo yes || echo "no ($(tail -n1 "$OUT/require_cuda.log"))")"

run_step dlprobe_ops 120 - "$BIN/dlprobe" --ops
if [ "$RC" = 0 ]; then
  # Count the ✓ in the GPU column of the matrix: the header's field number of /device:GPU:0
  # is the same field number in every op row (the OP names have no spaces).
  fig=$(awk '/^  OP /{ for (i = 1; i <= NF; i++) if ($i ~ /GPU:0$/) col = i; next }
             col && NF >= col && $1 ~ /^[a-z0-9_]+$/ { n++; if ($col == "✓") y++ }
             END { if (col) printf "GPU:0 runs %d of %d ops", y, n; else print "no GPU column" }' \
        "$OUT/dlprobe_ops.log")
  record dlprobe_ops pass "$SECS" "$fig"
else
  record dlprobe_ops FAIL "$SECS" "$(why)"
fi

# ---- 2. GPU-labelled tests (plugins/cuda/CMakeLists.txt: LABELS gpu) --------------------
# Run even without a GPU: the tests skip themselves then, and the run still proves that the
# executable starts (libraries found, symbols resolved) — a failure then is a real one.
for t in dlrt_cuda_gpu_test dlrt_cuda_ops_gpu_test; do
  run_step "$t" 240 - "$BIN/$t" --gtest_output="json:$OUT/$t.json"
  if [ "$RC" != 0 ]; then
    if [ "$MISSING" = 1 ]; then record "$t" FAIL "$SECS" "$(why)"
    else record "$t" FAIL "$SECS" "$(why); $(gtest_figure "$OUT/$t.log")"; fi
  elif [ "$HAVE_GPU" = 0 ]; then
    record "$t" skip "$SECS" "no GPU; $(gtest_figure "$OUT/$t.log")"
  else
    record "$t" pass "$SECS" "$(gtest_figure "$OUT/$t.log")"
  fi
done

# ---- 3. conformance on the CUDA device ---------------------------------------------------
# Tests are named Conformance/<op>.<plugin>_<n>; only loaded devices get tests, so without a
# GPU the filter matches nothing and the step is skipped.
if [ "$HAVE_GPU" = 1 ]; then
  run_step conformance_cuda 300 - "$BIN/conformance_test" --gtest_filter='*cuda*' \
    --gtest_output="json:$OUT/conformance_cuda.json"
  if [ "$RC" = 0 ]; then
    record conformance_cuda pass "$SECS" "$(gtest_figure "$OUT/conformance_cuda.log")"
  else
    record conformance_cuda FAIL "$SECS" "$(why); $(gtest_figure "$OUT/conformance_cuda.log")"
  fi
else
  skip conformance_cuda "no GPU"
fi

# ---- 3b. mirrored training on the GPU (tests/nn: two logical GPUs; one GPU through NCCL) --
if [ "$HAVE_GPU" = 1 ]; then
  run_step mirrored_gpu 300 - "$BIN/dlrt_nn_test" --gtest_filter='NnMirroredGpu*' \
    --gtest_output="json:$OUT/mirrored_gpu.json"
  if [ "$RC" = 0 ]; then
    record mirrored_gpu pass "$SECS" "$(gtest_figure "$OUT/mirrored_gpu.log")"
  else
    record mirrored_gpu FAIL "$SECS" "$(why); $(gtest_figure "$OUT/mirrored_gpu.log")"
  fi
else
  skip mirrored_gpu "no GPU"
fi

# ---- 4. the reference workload (dlbench) --------------------------------------------------
# train prints one JSON report on stdout; the figure is the timed epoch and the validation
# accuracy. ops prints the per-op medians; the figure is the sum of the step's op medians.
train_figure() {
  json '"epoch %.2f s, %.3g ms/step, val_acc %.3f" % (d["epoch_seconds"][0], d["ms_per_step"], d["val_accuracy"])' "$1"
}
bench_train() {  # bench_train NAME JSON TIMEOUT DLBENCH-ARGS...
  local name=$1 out=$2 limit=$3; shift 3
  run_step "$name" "$limit" "$out" "$BIN/dlbench" train --data "$DATA" --epochs 1 "$@"
  if [ "$RC" = 0 ]; then record "$name" pass "$SECS" "$(train_figure "$out")"
  else record "$name" FAIL "$SECS" "$(why)"; fi
}
NODATA="skipped: no data (carry /usr/share/datasets/fashion-mnist in .devrun/data)"
if [ -n "$DATA" ] && [ ! -d "$DATA" ]; then
  NODATA="skipped: no data folder $DATA"; DATA=""
fi

# The pack (tools/gpu-pack.sh) carries only the test set: Fashion-MNIST's 26 MB of training
# images do not fit the 64 MiB that travel beside oneDNN. Then a training set of the same
# shape (60,000 images) is made here from six copies of the test set: the same work per
# epoch, so the timings hold; the accuracies of that run mean nothing.
if [ -n "$DATA" ] && [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ ! -e "$DATA/train-images-idx3-ubyte" ] &&
   [ -e "$DATA/t10k-images-idx3-ubyte.gz" ]; then
  SYN="$OUT/data"
  mkdir -p "$SYN"
  if python3 - "$DATA" "$SYN" <<'PY'
import gzip, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
for kind, header in (("images", 16), ("labels", 8)):
    raw = gzip.open(f"{src}/t10k-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz").read()
    head, body = bytearray(raw[:header]), raw[header:]
    head[4:8] = struct.pack(">I", 6 * struct.unpack(">I", bytes(head[4:8]))[0])
    with open(f"{dst}/train-{kind}-idx{3 if kind == 'images' else 1}-ubyte", "wb") as f:
        f.write(head + body * 6)
    for name in (f"t10k-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz",):
        shutil.copy(f"{src}/{name}", f"{dst}/{name}")
PY
  then
    echo "gpu-check: no training set in $DATA; made 60,000 images from 6 copies of the test set in $SYN (timings only)"
    DATA="$SYN"
  fi
fi

if [ "$HAVE_GPU" = 0 ]; then skip bench_gpu "no GPU"; skip bench_gpu_nocapture "no GPU"
elif [ -z "$DATA" ]; then skip bench_gpu "$NODATA"; skip bench_gpu_nocapture "$NODATA"
else
  bench_train bench_gpu "$OUT/bench_gpu.json" 300 --device GPU:0
  bench_train bench_gpu_nocapture "$OUT/bench_gpu_nocapture.json" 300 --device GPU:0 --no-capture
fi

if [ -z "$DATA" ]; then skip bench_cpu "$NODATA"
else bench_train bench_cpu "$OUT/bench_cpu.json" 300 --device CPU:0 --threads 16
fi

if [ "$HAVE_GPU" = 1 ]; then
  run_step ops_gpu 180 "$OUT/ops_gpu.json" "$BIN/dlbench" ops --device GPU:0 --repeat 5
  if [ "$RC" = 0 ]; then
    record ops_gpu pass "$SECS" \
      "$(json '"%d ops, step ops sum %.3g ms (medians)" % (len(d["ops"]), sum(o["median_us"] for o in d["ops"] if o.get("in_step")) / 1000)' "$OUT/ops_gpu.json")"
  else
    record ops_gpu FAIL "$SECS" "$(why)"
  fi
else
  skip ops_gpu "no GPU"
fi

# ---- 5. the table ----------------------------------------------------------------------
{
  echo
  printf '%-24s %-6s %8s  %s\n' STEP STATUS SECONDS "KEY FIGURE"
  for i in "${!ROW_NAME[@]}"; do
    printf '%-24s %-6s %8s  %s\n' "${ROW_NAME[$i]}" "${ROW_STATUS[$i]}" "${ROW_SECS[$i]}" "${ROW_FIG[$i]}"
  done
  echo "result: $([ "$FAILED" = 0 ] && echo "every step that could run passed" || echo "FAILURES") (logs and JSON in $OUT)"
} | tee "$OUT/summary.txt"
exit "$FAILED"
