#!/usr/bin/env bash
# tools/windows/compare-linux.sh LINUX_BUILD WINDOWS_BUILD: the same training on both builds,
# the losses compared (issue 44's bar: within 1e-4). Both run the cpu plugin (oneDNN 2.6.3 from
# Debian on Linux, 2.6.0 from PyPI's wheel on Windows) with the same seed:
#   mnist_cnn --epochs 1 on Fashion-MNIST, the plugin's defaults (its Winograd convolutions on),
#             and --limit 2048 with cpu:winograd=0 (oneDNN's convolutions): the epoch's loss and
#             accuracy and the held-out val_loss/val_accuracy of Keras' CSVLogger file (17 digits);
#   embed_c:  the C sample's printed step losses (4 decimals) and accuracies (3).
# Both with `threads` = the machine's CPU count: under Wine, oneDNN's OpenMP runtime (Wine's
# vcomp140.dll) ignores omp_set_num_threads, so the Windows build's oneDNN always runs as many
# threads as there are CPUs, and a oneDNN matmul split over 2 threads sums in another order than
# over 1 (docs/windows.md). With that, and exp/log/pow from plugins/common/portable_math.hpp
# instead of each C library's, the two builds' training agrees to every printed digit.
# Prints each pair and the largest difference; exit status 1 if any pair differs by more than
# 1e-4.
set -euo pipefail
linux=${1:?usage: compare-linux.sh LINUX_BUILD WINDOWS_BUILD}
win=${2:?usage: compare-linux.sh LINUX_BUILD WINDOWS_BUILD}
here="$(cd "$(dirname "$0")" && pwd)"
linux=$(cd "$linux" && pwd)
win=$(cd "$win" && pwd)
data=${DLRT_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
# A scratch folder inside the Windows build (not below /tmp: docs/windows.md).
work="$win/compare-linux"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
threads=$(nproc)
# Both builds with the cpu plugin's fixed kernel rules: each would calibrate on its own
# (Wine's cache folder is not Linux's), and timings must not decide their kernels here.
export DLRT_CPU_CALIBRATE=skip
export DLRT_PLUGIN_OPTIONS=cpu:threads=$threads DLRT_VISIBLE_DEVICES= DLRT_LOG_DEVICE_PLACEMENT=
args=(--data "$data" --epochs 1 --device CPU:0 --seed 1)
"$linux/bin/embed_c" >linux_embed.txt
"$here/wine-run.sh" "$win/bin/embed_c.exe" >windows_embed.txt
"$linux/bin/mnist_cnn" "${args[@]}" --csv-log linux.csv >linux_cnn.txt
"$here/wine-run.sh" "$win/bin/mnist_cnn.exe" "${args[@]}" --csv-log windows.csv >windows_cnn.txt
DLRT_PLUGIN_OPTIONS="cpu:threads=$threads;cpu:winograd=0" \
  "$linux/bin/mnist_cnn" "${args[@]}" --limit 2048 --csv-log linux_onednn.csv >linux_cnn_onednn.txt
DLRT_PLUGIN_OPTIONS="cpu:threads=$threads;cpu:winograd=0" \
  "$here/wine-run.sh" "$win/bin/mnist_cnn.exe" "${args[@]}" --limit 2048 \
  --csv-log windows_onednn.csv >windows_cnn_onednn.txt
python3 - <<'PY'
import csv, re, sys
def csv_row(path):
    with open(path, newline="") as f:
        return {k: float(v) for k, v in list(csv.DictReader(f))[-1].items()}
def embed(path):
    text = open(path).read()
    return {f"step {m[0]} loss": float(m[1])
            for m in re.findall(r"step +(\d+) loss ([0-9.]+)", text)} | {
            f"accuracy {m[0]}": float(m[1])
            for m in re.findall(r"accuracy (before training|after \d+ steps) ([0-9.]+)", text)}
pairs = []
for name, lin, win in (("mnist_cnn", csv_row("linux.csv"), csv_row("windows.csv")),
                       ("mnist_cnn (winograd=0, 2048)", csv_row("linux_onednn.csv"),
                        csv_row("windows_onednn.csv")),
                       ("embed_c", embed("linux_embed.txt"), embed("windows_embed.txt"))):
    if not lin or set(lin) != set(win):
        sys.exit(f"compare-linux: {name}: the two runs report different fields: "
                 f"{sorted(lin)} vs {sorted(win)}")
    for key in sorted(lin):
        pairs.append((f"{name} {key}", lin[key], win[key]))
worst = 0.0
for label, a, b in pairs:
    worst = max(worst, abs(a - b))
    print(f"  {label:40s} linux {a:.8f}  windows {b:.8f}  diff {abs(a - b):.2e}")
print(f"compare-linux: largest difference {worst:.2e} (bar 1e-4)")
sys.exit(0 if worst <= 1e-4 else 1)
PY
