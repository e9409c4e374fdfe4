#!/bin/sh
# tools/e2e-fashion.sh: the end-to-end check of docs/design.md section 10 in one command — the
# reference CNN (samples/mnist_cnn), 5 epochs on all of Fashion-MNIST, test accuracy >= 0.88.
# Not in the default CTest suite (mnist_cnn_e2e there trains one epoch against 0.80): five
# epochs take minutes on a small CPU (about 4 on 2 cores with cpu:threads=1).
#
#   tools/e2e-fashion.sh                      build/ (BUILD_DIR=... for another build tree)
#   tools/e2e-fashion.sh --device CPU:0       extra flags go to mnist_cnn
#   DLRT_PLUGIN_OPTIONS=cpu:threads=1 tools/e2e-fashion.sh   on a busy machine
set -eu
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  echo "e2e-fashion: no build tree in '$BUILD_DIR'; run 'make build' (or set BUILD_DIR)" >&2
  exit 2
fi
cmake --build "$BUILD_DIR" --target mnist_cnn
exec "$BUILD_DIR/bin/mnist_cnn" --epochs 5 --batch 64 --device auto --expect-accuracy 0.88 "$@"
