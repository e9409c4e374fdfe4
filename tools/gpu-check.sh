#!/usr/bin/env bash
# tools/gpu-check.sh: every check that needs the GPU machine, in one run that fits its lease.
#
# The GPU machine (one H200) is lent for about 15 minutes per session, start-up included, and
# one command may run at most 600 s; what the command leaves in $OUT comes back, at most 8
# files of 16 MiB. So this script has a global deadline (GPU_CHECK_DEADLINE, default 480 s)
# and runs the steps most valuable first, each capped at its planned time and at the time
# left; a step with under 5 s left is skipped ("no time"). Each step's line is printed, and
# appended to $OUT/summary.txt, the moment it finishes, so a kill loses nothing already done.
# Data and full logs stay under /tmp; $OUT gets at most 7 small files:
#   summary.txt          the table (one line per step as it finishes, then the totals);
#   dlprobe.json         dlprobe --json;
#   bench_gpu.json, bench_gpu_nocapture.json, bench_gpu_bf16.json   dlbench train reports;
#   logs.tar.gz          every step's log and gtest JSON, each cut to its last 256 KiB;
#   sizes.txt            the byte size of each file above.
#
# usage, from the project root (built and packed here by tools/gpu-pack.sh BUILD_DIR):
#   source .devrun/env.sh; bash tools/gpu-check.sh [BIN] [--data DIR]
#   bash tools/gpu-check.sh --dry-run     # here: every GPU step skips, the schedule prints
#
#   BIN        folder with dlprobe, dlbench and the test executables. Default: .devrun/build/bin,
#              .devrun/bin, $DLRT_BUILD_DIR/bin, build/bin (the first that exists).
#   --data DIR Fashion-MNIST in MNIST's file layout (or env DLRT_DATA; default .devrun/data).
#   OUT        env: the folder that comes back (default ./gpu-check-out).
#
# Steps and their planned seconds, in the order they run (the sum is checked <= the deadline
# by the CTest test gpu_check_dry_run):
#   dlprobe 15, dlprobe_json 10, dlprobe_ops 25   the devices and the op x device matrix;
#   dlrt_cuda_gpu_test 60                         device services, capture, NCCL on one rank;
#   dlrt_cuda_ops_gpu_test 70                     every CUDA kernel against the reference;
#   conformance_cuda 60                           the conformance suite on the CUDA device;
#   onnx_light_gpu 20                             ONNX's 9 light models on GPU:0 against their
#                                                 reference outputs (dlrt-onnx-suite);
#   bench_gpu 60, bench_gpu_nocapture 25          one training epoch, with and without CUDA Graphs
#                                                 (the second on 12,800 images);
#   bench_gpu_bf16 20                             12,800 images under mixed_bfloat16;
#   resnet_gpu 35                                 samples/resnet (batch norm on cuDNN) learns;
#   vae_gpu 20, dcgan_gpu 20                      samples/vae and samples/dcgan (custom steps) learn;
#   mirrored_gpu 40                               mirrored training through NCCL.
#
# Exit status: 0 when every step that ran passed (skips do not count), 1 otherwise.
set -uo pipefail   # not -e: a failing step must not stop the steps after it

# ---- arguments -------------------------------------------------------------------------
BIN=""
DATA="${DLRT_DATA:-}"
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data) DATA="${2:?--data needs a folder}"; shift 2 ;;
    --data=*) DATA="${1#--data=}"; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) BIN="$1"; shift ;;
  esac
done
DEADLINE="${GPU_CHECK_DEADLINE:-480}"
START=$(date +%s)
if [ -z "$BIN" ]; then
  for cand in .devrun/build/bin .devrun/bin "${DLRT_BUILD_DIR:+$DLRT_BUILD_DIR/bin}" build/bin; do
    if [ -n "$cand" ] && [ -d "$cand" ]; then BIN="$cand"; break; fi
  done
fi
if [ "$DRY" = 0 ] && { [ -z "$BIN" ] || [ ! -d "$BIN" ]; }; then
  echo "gpu-check: no binaries folder (tried .devrun/build/bin, .devrun/bin, build/bin); pass one" >&2
  exit 1
fi
[ -n "$BIN" ] && [ -d "$BIN" ] && BIN=$(cd "$BIN" && pwd)
if [ -z "$DATA" ] && [ -d .devrun/data ]; then DATA=.devrun/data; fi
OUT="${OUT:-./gpu-check-out}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/gpu-check.XXXXXX)   # full logs, gtest JSON, the synthetic data set
LOGS="$WORK/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

say() { echo "$*" | tee -a "$SUMMARY"; }
say "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) deadline ${DEADLINE}s BIN=${BIN:-<none>} DATA=${DATA:-<none>}$([ "$DRY" = 1 ] && echo ' (dry run)')"
[ "$DRY" = 0 ] && { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
  | tee -a "$SUMMARY" || say "gpu-check: no nvidia-smi"; }
printf '%-24s %-6s %7s %7s  %s\n' STEP STATUS PLANNED SECONDS "KEY FIGURE" | tee -a "$SUMMARY"

# ---- bookkeeping -----------------------------------------------------------------------
FAILED=0
PLANNED_TOTAL=0
record() {  # record NAME STATUS PLANNED SECONDS FIGURE: printed and kept at once
  [ "$2" = FAIL ] && FAILED=1
  printf '%-24s %-6s %7s %7s  %s\n' "$1" "$2" "$3" "$4" "$5" | tee -a "$SUMMARY"
}
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }

# run_step NAME PLANNED_S STDOUT_FILE CMD...
# Runs CMD under `timeout`, capped at min(PLANNED_S, time left). Its output goes to
# $LOGS/NAME.log (stdout to STDOUT_FILE instead when that is not "-"). Sets RC (124: timed
# out; 125: not run, no time; 127: binary missing) and SECS.
run_step() {
  local name=$1 planned=$2 stdout=$3; shift 3
  local log="$LOGS/$name.log" limit t0
  PLANNED_TOTAL=$(( PLANNED_TOTAL + planned ))
  MISSING=0; RC=0; SECS=0
  limit=$(left); [ "$limit" -gt "$planned" ] && limit=$planned
  if [ "$limit" -lt 5 ]; then RC=125; return; fi
  if [ ! -x "$1" ]; then echo "not found: $1" > "$log"; RC=127; MISSING=1; return; fi
  t0=$(date +%s.%N)
  if [ "$stdout" = - ]; then
    timeout --kill-after=5 "$limit" "$@" > "$log" 2>&1
  else
    timeout --kill-after=5 "$limit" "$@" 2> "$log" > "$stdout"
  fi
  RC=$?
  SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then echo "TIMED OUT after ${limit}s" >> "$log"; fi
}
why() {
  if [ "$MISSING" = 1 ]; then echo "binary not found in BIN"; return; fi
  case "$RC" in
    124|137) echo "timed out; $(tail -n 1 "$LOGS/$1.log" 2>/dev/null)" ;;
    127) echo "exit 127 (a shared library not found? see logs.tar.gz)" ;;
    *) echo "exit $RC; $(grep -m1 -E 'FAILED|error|Error' "$LOGS/$1.log" 2>/dev/null | cut -c1-80)" ;;
  esac
}
# planned NAME SECONDS WHY: a step that does not run here; its time still counts in the plan.
planned() { PLANNED_TOTAL=$(( PLANNED_TOTAL + $2 )); record "$1" skip "$2" 0 "$3"; }
# judge NAME PLANNED FIGURE: records the result of the run_step just made.
judge() {
  if [ "$RC" = 125 ]; then record "$1" skip "$2" 0 "no time left before the ${DEADLINE}s deadline"
  elif [ "$RC" = 0 ]; then record "$1" pass "$2" "$SECS" "$3"
  else record "$1" FAIL "$2" "$SECS" "$(why "$1")"; fi
}

json() {  # json PY-EXPR FILE: one value from a JSON report, "?" when unreadable
  python3 - "$2" "$1" 2>/dev/null <<'PY' || echo "?"
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {}, {"d": d})
print(f"{v:.4g}" if isinstance(v, float) else v)
PY
}
gtest_figure() {  # "N ran: P pass, F fail" from gtest's summary lines
  local ran passed failed
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$1" 2>/dev/null | tail -n1)
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" 2>/dev/null | tail -n1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*, listed below.*/\1/p' "$1" 2>/dev/null | tail -n1)
  echo "${ran:-?} ran: ${passed:-0} pass, ${failed:-0} fail"
}

# ---- 1. dlprobe: is there a CUDA device? -----------------------------------------------
HAVE_GPU=0
if [ "$DRY" = 1 ]; then
  planned dlprobe 15 "dry run"; planned dlprobe_json 10 "dry run"; planned dlprobe_ops 25 "dry run"
else
  run_step dlprobe 15 - "$BIN/dlprobe"
  judge dlprobe 15 "$(grep -c '^  /device:' "$LOGS/dlprobe.log" 2>/dev/null) devices"
  run_step dlprobe_json 10 "$OUT/dlprobe.json" "$BIN/dlprobe" --json
  judge dlprobe_json 10 "$(json '[x["attributes"]["model"] for x in d["devices"] if x["platform"]=="cuda"] or "no cuda device"' "$OUT/dlprobe.json")"
  if [ -x "$BIN/dlprobe" ] && timeout 20 "$BIN/dlprobe" -q --require cuda > "$LOGS/require_cuda.log" 2>&1; then HAVE_GPU=1; fi
  run_step dlprobe_ops 25 - "$BIN/dlprobe" --ops
  judge dlprobe_ops 25 "$(awk '/^  OP /{ for (i = 1; i <= NF; i++) if ($i ~ /GPU:0$/) col = i; next }
             col && NF >= col && $1 ~ /^[a-z0-9_]+$/ { n++; if ($col == "✓") y++ }
             END { if (col) printf "GPU:0 runs %d of %d ops", y, n; else print "no GPU column" }' "$LOGS/dlprobe_ops.log" 2>/dev/null)"
fi
NOGPU="no GPU ($( { tail -n1 "$LOGS/require_cuda.log" 2>/dev/null || echo "dlprobe --require cuda did not run"; } | cut -c1-60))"
[ "$DRY" = 1 ] && NOGPU="dry run"

# gpu_step NAME PLANNED FIGURE-FN CMD...: a step that needs the GPU.
gpu_step() {
  local name=$1 planned_s=$2 fig=$3; shift 3
  if [ "$HAVE_GPU" = 0 ]; then planned "$name" "$planned_s" "$NOGPU"; return; fi
  run_step "$name" "$planned_s" - "$@"
  judge "$name" "$planned_s" "$($fig "$LOGS/$name.log")"
}

# ---- 2. GPU unit tests, 3. conformance on the CUDA device -------------------------------
for t in dlrt_cuda_gpu_test:60 dlrt_cuda_ops_gpu_test:70; do
  gpu_step "${t%:*}" "${t#*:}" gtest_figure "${BIN:-.}/${t%:*}" --gtest_output="json:$LOGS/${t%:*}.json"
done
gpu_step conformance_cuda 60 gtest_figure "${BIN:-.}/conformance_test" --gtest_filter='*cuda*' \
  --gtest_output="json:$LOGS/conformance_cuda.json"

# ---- 3b. ONNX's light models on GPU:0: every one must reproduce its reference
# outputs within ONNX's tolerances (--min-pass 1). The cases travel in .devrun/onnx-cases
# (tools/gpu-pack.sh copies the build's generated light cases, 6 MB; env ONNX_CASES overrides).
ONNX_CASES="${ONNX_CASES:-.devrun/onnx-cases}"
onnx_figure() { grep -m1 'light cases on' "$1" 2>/dev/null | sed 's/^dlrt-onnx-suite: //' | cut -c1-70; }
if [ "$HAVE_GPU" = 1 ] && [ ! -d "$ONNX_CASES/light" ]; then
  planned onnx_light_gpu 20 "no light cases in $ONNX_CASES"
else
  gpu_step onnx_light_gpu 20 onnx_figure "${BIN:-.}/dlrt-onnx-suite" --cases "$ONNX_CASES" \
    --kind light --devices GPU:0 --min-pass 1
fi

# ---- 4. one training epoch on GPU:0, with and without CUDA Graphs -----------------------
# The pack carries only the test set (the training images do not fit beside oneDNN): then a
# training set of the same shape is made in /tmp from six copies of it (the same work per
# epoch, so the timings hold; the accuracies of that run mean nothing).
if [ "$HAVE_GPU" = 1 ] && [ -n "$DATA" ] && [ -d "$DATA" ] && [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] &&
   [ ! -e "$DATA/train-images-idx3-ubyte" ] && [ -e "$DATA/t10k-images-idx3-ubyte.gz" ]; then
  SYN="$WORK/data"; mkdir -p "$SYN"
  python3 - "$DATA" "$SYN" <<'PY' && DATA="$SYN"
import gzip, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
for kind, header, dims in (("images", 16, 3), ("labels", 8, 1)):
    raw = gzip.open(f"{src}/t10k-{kind}-idx{dims}-ubyte.gz").read()
    head, body = bytearray(raw[:header]), raw[header:]
    head[4:8] = struct.pack(">I", 6 * struct.unpack(">I", bytes(head[4:8]))[0])
    with open(f"{dst}/train-{kind}-idx{dims}-ubyte", "wb") as f:
        f.write(head + body * 6)
    shutil.copy(f"{src}/t10k-{kind}-idx{dims}-ubyte.gz", f"{dst}/")
PY
fi
train_step() {  # train_step NAME PLANNED DLBENCH-ARGS...
  local name=$1 planned_s=$2; shift 2
  if [ "$HAVE_GPU" = 0 ]; then planned "$name" "$planned_s" "$NOGPU"; return; fi
  if [ -z "$DATA" ] || [ ! -d "$DATA" ]; then planned "$name" "$planned_s" "no data (.devrun/data)"; return; fi
  run_step "$name" "$planned_s" "$OUT/$name.json" "$BIN/dlbench" train --data "$DATA" --epochs 1 "$@"
  judge "$name" "$planned_s" "$(json '"epoch %.2f s, %.3g ms/step, val_acc %.3f" % (d["epoch_seconds"][0], d["ms_per_step"], d["val_accuracy"])' "$OUT/$name.json")"
}
train_step bench_gpu 60 --device GPU:0
train_step bench_gpu_nocapture 25 --device GPU:0 --no-capture --limit 12800
# Keras' mixed_bfloat16 policy on the GPU (docs/ops.md "16-bit floats": the CUDA plugin's f32
# kernels between its conversion kernels, until cuDNN/cuBLASLt take bf16 directly).
train_step bench_gpu_bf16 20 --device GPU:0 --precision bf16 --limit 12800

# ---- 4b. samples/resnet on GPU:0: ResNet-20 with batch norm (cuDNN) trains and learns ------
# 100 steps of batch 128 (--limit 12800), batch norm momentum 0.9 so that the moving
# statistics follow in so few steps; exit 1 (a FAIL) below 0.5 test accuracy (chance: 0.1).
# On the packed data the training set holds the test images, so the bar checks learning, not
# generalisation; the figure is the sample's last lines.
resnet_figure() { tr '\r' '\n' < "$1" | grep -E '^test_accuracy|ms/step' | tail -n 2 | sed 's/.* \([0-9]*m\{0,1\}s\/step\) .*/\1/' | tr '\n' ' '; }
if [ "$HAVE_GPU" = 0 ]; then planned resnet_gpu 35 "$NOGPU"
elif [ -z "$DATA" ] || [ ! -d "$DATA" ]; then planned resnet_gpu 35 "no data (.devrun/data)"
else
  run_step resnet_gpu 35 - "$BIN/resnet" --device GPU:0 --data "$DATA" --epochs 1 --limit 12800 \
    --bn-momentum 0.9 --expect-accuracy 0.5
  judge resnet_gpu 35 "$(resnet_figure "$LOGS/resnet_gpu.log")"
fi

# ---- 4c. samples/vae and samples/dcgan on GPU:0: custom steps (nn::TrainStep) -----------------
# The VAE: 100 steps of 128 (--limit 12800), exit 1 (a FAIL) when the test negative ELBO is
# above 400 nats (a decoder that learned nothing scores 543). The DCGAN: 50 steps, both PNGs
# of the run written (no quality bar in so few steps). Figures: the last lines.
gen_figure() { tr '\r' '\n' < "$1" | grep -E '^test_neg_elbo|ms/step' | tail -n 2 | sed 's/.* \([0-9]*m\{0,1\}s\/step\) .*/\1/' | tr '\n' ' '; }
if [ "$HAVE_GPU" = 0 ]; then planned vae_gpu 20 "$NOGPU"; planned dcgan_gpu 20 "$NOGPU"
elif [ -z "$DATA" ] || [ ! -d "$DATA" ]; then
  planned vae_gpu 20 "no data (.devrun/data)"; planned dcgan_gpu 20 "no data (.devrun/data)"
else
  run_step vae_gpu 20 - "$BIN/vae" --device GPU:0 --data "$DATA" --epochs 1 --limit 12800 \
    --test-limit 1000 --out-dir "$WORK/vae" --expect-neg-elbo 400
  judge vae_gpu 20 "$(gen_figure "$LOGS/vae_gpu.log")"
  run_step dcgan_gpu 20 - "$BIN/dcgan" --device GPU:0 --data "$DATA" --epochs 1 --limit 6400 \
    --out-dir "$WORK/dcgan"
  judge dcgan_gpu 20 "$(gen_figure "$LOGS/dcgan_gpu.log")"
fi

# ---- 5. NCCL: mirrored training (tests/nn: two logical GPUs; one GPU through NCCL) -------
gpu_step mirrored_gpu 40 gtest_figure "${BIN:-.}/dlrt_nn_test" --gtest_filter='NnMirroredGpu*' \
  --gtest_output="json:$LOGS/mirrored_gpu.json"

# ---- what comes back ---------------------------------------------------------------------
# Logs cut to their last 256 KiB each, in one archive; empty JSON reports of steps that did
# not run are removed.
for f in "$LOGS"/*; do [ -f "$f" ] && tail -c 262144 "$f" > "$f.cut" && mv "$f.cut" "$f"; done
tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs 2>/dev/null
for f in "$OUT"/*.json; do [ -s "$f" ] || rm -f "$f"; done
say "planned ${PLANNED_TOTAL}s of the ${DEADLINE}s deadline; took $(( $(date +%s) - START ))s"
say "result: $([ "$FAILED" = 0 ] && echo "every step that ran passed" || echo FAILURES)"
( cd "$OUT" && for f in *; do [ "$f" = sizes.txt ] || printf '%10d  %s\n' "$(stat -c %s "$f")" "$f"; done ) > "$OUT/sizes.txt"
say "in \$OUT ($OUT): $(ls "$OUT" | wc -l) files, $(du -sk "$OUT" | cut -f1) KiB"
cat "$OUT/sizes.txt"
rm -rf "$WORK"
exit "$FAILED"
