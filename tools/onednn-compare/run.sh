#!/bin/bash
# tools/onednn-compare/run.sh [VENV] [ROUNDS]: oneDNN 2.6 (Debian's libdnnl-dev, what dlrt
# builds against) against the newest oneDNN from PyPI (onednn-devel, oneDNN 3.x) on the
# convolutions of dlrt's training benchmarks (conv_bench.cc), f32 and bf16, two threads.
# Installs onednn-devel into VENV (default build/onednn-v3-venv, about 2 GB with its Intel
# runtime dependencies), builds conv_bench against each version, runs them in alternating
# rounds and prints the best median of each case and the ratio v3/v2 (below 1: v3 faster).
# First it prints one core's bf16 dot-product and f32 FMA rates (dot_rates.cc), what bounds
# every bf16 convolution. docs/benchmarks.md has the figures and the decision.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-build/onednn-v3-venv}
rounds=${2:-2}
out=$(mktemp -d)
[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
[ -e "$venv/include/oneapi/dnnl/dnnl.hpp" ] || "$venv/bin/pip" install -q onednn-devel
venv=$(cd "$venv" && pwd)
g++ -O3 -std=c++17 -o "$out/dot_rates" "$here/dot_rates.cc"
"$out/dot_rates" || true
g++ -O2 -std=c++17 -o "$out/v2" "$here/conv_bench.cc" -ldnnl
g++ -O2 -std=c++17 -I"$venv/include" -o "$out/v3" "$here/conv_bench.cc" -L"$venv/lib" -ldnnl \
  -Wl,-rpath,"$venv/lib"
# PyPI's build runs its CPU engine on SYCL's OpenCL CPU device, which needs the ICD it ships.
v3_env=(env LD_LIBRARY_PATH="$venv/lib" OCL_ICD_FILENAMES="$venv/lib/libintelocl.so")
for r in $(seq "$rounds"); do
  OMP_NUM_THREADS=2 taskset -c 0,1 "$out/v2" > "$out/v2_$r.txt"
  OMP_NUM_THREADS=2 taskset -c 0,1 "${v3_env[@]}" "$out/v3" > "$out/v3_$r.txt"
done
head -1 "$out/v2_1.txt"
head -1 "$out/v3_1.txt"
python3 - "$out" "$rounds" <<'PY'
import re, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(f):
    d = {}
    for line in open(f):
        m = re.match(r'(.{28}) (\S+)\s+(f32|bf16)\s+([\d.]+) us', line)
        if m: d[(m.group(1).strip(), m.group(2), m.group(3))] = float(m.group(4))
    return d
v2 = [load(f'{out}/v2_{r}.txt') for r in range(1, rounds + 1)]
v3 = [load(f'{out}/v3_{r}.txt') for r in range(1, rounds + 1)]
total = {}
print(f"{'case':28} {'pass':16} {'dtype':5} {'v2 us':>8} {'v3 us':>8} {'v3/v2':>6}")
for k in v2[0]:
    a = min(d[k] for d in v2 if k in d); b = min(d[k] for d in v3 if k in d)
    t = total.setdefault(k[2], [0.0, 0.0]); t[0] += a; t[1] += b
    print(f"{k[0]:28} {k[1]:16} {k[2]:5} {a:8.0f} {b:8.0f} {b / a:6.2f}")
for dtype, (a, b) in total.items():
    print(f"all {dtype} cases: {a:.0f} us (v2) vs {b:.0f} us (v3): v3/v2 = {b / a:.2f}")
PY
rm -rf "$out"
