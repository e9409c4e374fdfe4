#!/usr/bin/env bash
# gpu_check_dry_run.sh ROOT: checks tools/gpu-check.sh without a GPU (CTest gpu_check_dry_run).
#   1. --dry-run: exit 0, the table is printed with every step, the planned time fits the
#      480 s deadline, and $OUT holds at most 8 files, each under 1 MiB;
#   2. a real run whose deadline has passed (GPU_CHECK_DEADLINE=0, BIN an empty folder):
#      every step is skipped for lack of time, none runs, and the table is still printed.
set -uo pipefail
root=${1:?usage: gpu_check_dry_run.sh PROJECT_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_check_dry_run: $*" >&2; exit 1; }

cd "$root"
OUT="$tmp/out" bash tools/gpu-check.sh --dry-run > "$tmp/dry.txt" 2>&1 || { cat "$tmp/dry.txt"; fail "dry run exited $?"; }
cat "$tmp/dry.txt"
grep -q '^STEP  *STATUS  *PLANNED  *SECONDS  *KEY FIGURE' "$tmp/dry.txt" || fail "no table header"
for step in dlprobe dlprobe_json dlprobe_ops dlrt_cuda_gpu_test dlrt_cuda_ops_gpu_test \
            conformance_cuda onnx_light_gpu bench_gpu bench_gpu_nocapture bench_gpu_bf16 resnet_gpu vae_gpu dcgan_gpu mirrored_gpu; do
  grep -q "^$step  *skip " "$tmp/dry.txt" || fail "step $step missing from the table"
done
planned=$(sed -n 's/^planned \([0-9]*\)s of the \([0-9]*\)s deadline.*/\1/p' "$tmp/dry.txt")
[ -n "$planned" ] || fail "no 'planned Ns' line"
[ "$planned" -le 480 ] || fail "planned ${planned}s, more than 480 s"
files=$(ls "$tmp/out" | wc -l)
[ "$files" -le 8 ] || fail "$files files in \$OUT, at most 8 come back"
big=$(find "$tmp/out" -type f -size +1024k)
[ -z "$big" ] || fail "files over 1 MiB in \$OUT: $big"
grep -q '^mirrored_gpu  *skip' "$tmp/out/summary.txt" && grep -q '^planned ' "$tmp/out/summary.txt" ||
  fail "summary.txt in \$OUT lacks the table"

mkdir -p "$tmp/emptybin"
GPU_CHECK_DEADLINE=0 OUT="$tmp/out2" bash tools/gpu-check.sh "$tmp/emptybin" > "$tmp/late.txt" 2>&1
cat "$tmp/late.txt"
grep -q '^dlprobe  *skip .*no time left' "$tmp/late.txt" || fail "a passed deadline did not skip dlprobe"
if grep -q ' pass \| FAIL ' "$tmp/late.txt"; then fail "a step ran after the deadline"; fi
echo "gpu_check_dry_run: ok (planned ${planned}s, $files files in \$OUT)"
