#!/usr/bin/env bash
# tools/windows/compare-linux.sh LINUX_BUILD WINDOWS_BUILD: the same training on both builds,
# the losses compared (issue 44's bar: within 1e-4). Both run the cpu plugin with one thread
# (oneDNN 2.6.3 from Debian on Linux, 2.6.0 from PyPI's wheel on Windows) and the same seed:
#   mnist_cnn --limit 2048 --epochs 1 on Fashion-MNIST: the epoch's loss and accuracy and the
#             held-out val_loss/val_accuracy of Keras' CSVLogger file (17 digits each);
#   embed_c:  the C sample's printed step losses (4 decimals) and accuracies (3).
# The CNN is compared with the plugin's own Winograd convolutions off (cpu:winograd=0), as the
# bar applies; then once more with the defaults, printed, not held to the bar: the Winograd
# kernels' gradients differ between the two builds by a few units in the last place after one
# step (the forward pass and the first loss agree to every digit), and 32 steps of training
# grow that to ~3e-4 in the epoch's loss (docs/windows.md, "What is not done yet").
# Prints each pair and the largest difference; exit status 1 if any compared pair differs by
# more than 1e-4.
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
export DLRT_PLUGIN_OPTIONS=cpu:threads=1 DLRT_VISIBLE_DEVICES= DLRT_LOG_DEVICE_PLACEMENT=
args=(--data "$data" --limit 2048 --epochs 1 --device CPU:0 --seed 1)

"$linux/bin/embed_c" >linux_embed.txt
"$here/wine-run.sh" "$win/bin/embed_c.exe" >windows_embed.txt
DLRT_PLUGIN_OPTIONS="cpu:threads=1;cpu:winograd=0" \
  "$linux/bin/mnist_cnn" "${args[@]}" --csv-log linux.csv >linux_cnn.txt
DLRT_PLUGIN_OPTIONS="cpu:threads=1;cpu:winograd=0" \
  "$here/wine-run.sh" "$win/bin/mnist_cnn.exe" "${args[@]}" --csv-log windows.csv >windows_cnn.txt
"$linux/bin/mnist_cnn" "${args[@]}" --csv-log linux_winograd.csv >linux_cnn_winograd.txt
"$here/wine-run.sh" "$win/bin/mnist_cnn.exe" "${args[@]}" --csv-log windows_winograd.csv \
  >windows_cnn_winograd.txt

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
for name, lin, win in (("mnist_cnn (winograd=0)", csv_row("linux.csv"), csv_row("windows.csv")),
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
lin, win = csv_row("linux_winograd.csv"), csv_row("windows_winograd.csv")
for key in sorted(lin):
    print(f"  {'mnist_cnn (Winograd on, not held) ' + key:40s} linux {lin[key]:.8f}  "
          f"windows {win[key]:.8f}  diff {abs(lin[key] - win[key]):.2e}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
