#!/usr/bin/env bash
# Installs the Debian 12 packages dlrt needs to build, test and run, skipping those already
# present. Needs root (or sudo). Nothing is downloaded from anywhere but Debian's mirrors.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config ccache
  libdnnl-dev ocl-icd-opencl-dev          # CPU plugin (oneDNN; its CMake config wants OpenCL)
  libboost-dev libboost-filesystem-dev    # Boost.DLL plugin loading
  libfmt-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libpng-dev                              # PNG image grids (core/io/png_write.cc)
  libjpeg-dev                             # JPEG in keras.utils.load_img/save_img (python/src/jpeg.cc)
  libtiff-dev                             # TIFF in keras.utils.load_img (python/src/tiff.cc)
  libonnx-dev libprotobuf-dev             # ONNX import (core/onnx_import): ONNX's protobuf classes
  python3-venv python3-dev                # the README venv (Python package), the ONNX suite, dlbench
  libgtest-dev libgmock-dev               # tests
  libopenmpi-dev openmpi-bin              # multi-worker (plugins/mpi)
  dataset-fashion-mnist                   # the default data set
  fortunes                                # the default text corpus (/usr/share/games/fortunes)
  opencv-doc                              # examples' pictures (style_transfer: starry_night.jpg)
  trans-de-en                             # examples' sentence pairs (translation: /usr/share/trans/de-en)
)

bash "$(dirname "$0")/apt-install.sh" install-deps "${packages[@]}"
