#!/usr/bin/env bash
# tools/gpu-pack.sh BUILD_DIR: pack what tools/gpu-check.sh runs, for the GPU machine, into
# .devrun/ (../shared/device/pack.sh does the copying, stripping and library gathering).
#
# What travels is capped at 64 MiB and oneDNN alone is ~40 MiB, so only gpu-check.sh's
# binaries go (dlprobe, dlbench, conformance_test, the GPU-labelled tests, dlrt_nn_test,
# mnist_cnn, resnet, vae, dcgan), with libdlrt and the cpu, cuda, reference and null plugins (not mpi: one host,
# one process), and of the data set only the test set (4.4 MB); gpu-check.sh makes a training
# set of the same shape from it there. BUILD_DIR: a Release build with the CUDA plugin
# (sm_90 among CMAKE_CUDA_ARCHITECTURES; the default is 90). Then, on the GPU machine:
#   source .devrun/env.sh; bash tools/gpu-check.sh
# The .devrun/env.sh it leaves is the project's own (below), which finds the CUDA libraries
# in one pass over the disk.
set -euo pipefail
build=$(cd "${1:?usage: tools/gpu-pack.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DLRT_DATA:-/usr/share/datasets/fashion-mnist}
[ -e "$build/lib/dlrt/plugins/libdlrt-cuda.so" ] ||
  { echo "gpu-pack: $build has no CUDA plugin (configure with nvcc present)" >&2; exit 1; }
slim=$(mktemp -d)
trap 'rm -rf "$slim"' EXIT
mkdir -p "$slim/bin" "$slim/lib/dlrt/plugins"
for f in dlprobe dlbench conformance_test dlrt_cuda_gpu_test dlrt_cuda_ops_gpu_test dlrt_nn_test mnist_cnn resnet vae dcgan; do
  if [ -e "$build/bin/$f" ]; then cp -a "$build/bin/$f" "$slim/bin/"; else echo "gpu-pack: no $f in $build/bin" >&2; fi
done
cp -a "$build"/bin/*.py "$slim/bin/" 2>/dev/null || true
cp -a "$build"/lib/libdlrt.so* "$slim/lib/"
for p in cpu cuda reference null; do cp -a "$build/lib/dlrt/plugins/libdlrt-$p.so" "$slim/lib/dlrt/plugins/"; done
cd "$root"
bash ../shared/device/pack.sh "$slim"
# pack.sh's env.sh runs one `find /` per CUDA library (six scans of the GPU machine's disk,
# a minute of the lease); this one scans once for all of them and takes the first folder
# holding each.
cat > .devrun/env.sh <<'ENV'
# Sourced on the GPU machine from the project root (written by tools/gpu-pack.sh): points the
# dynamic linker at the packed libraries and at that machine's CUDA libraries, found in ONE
# pass over the disk, and prints what it found.
export LD_LIBRARY_PATH="$PWD/.devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
_dlrt_libs="libcudart.so.13 libcudnn.so.9 libcublas.so.13 libcublasLt.so.13 libnccl.so.2 libnvrtc.so.13"
_dlrt_found=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o \
  \( -name libcudart.so.13 -o -name libcudnn.so.9 -o -name libcublas.so.13 -o -name libcublasLt.so.13 \
     -o -name libnccl.so.2 -o -name libnvrtc.so.13 \) -print 2>/dev/null)
for lib in $_dlrt_libs; do
  d=$(printf '%s\n' "$_dlrt_found" | awk -v n="$lib" -F/ '$NF == n { print; exit }' | xargs -r dirname)
  if [ -n "$d" ]; then
    case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" ;; esac
  else
    echo "env.sh: $lib not found on this machine" >&2
  fi
done
unset _dlrt_libs _dlrt_found lib d
export DLRT_BUILD_DIR="$PWD/.devrun/build"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "env.sh: no nvidia-smi" >&2
ENV
mkdir -p .devrun/data
cp "$data"/t10k-*-ubyte.gz .devrun/data/
du -sh .devrun | awk '{print "gpu-pack: .devrun is " $1 " with the test set (the cap is 64 MiB)"}'
