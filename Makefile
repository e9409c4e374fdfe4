# The README's two commands. Each does everything on a fresh Debian 12 machine:
# install missing packages, configure, build, then run or test.
#   make run   probe the devices, then train the reference model on the best device
#   make test  the whole CTest suite
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The Python venv the README names: the package's build tools and pytest (tools/python).
VENV ?= .venv

.PHONY: all deps configure build run test clean docs format windows

all: build

deps:
	bash tools/install-deps.sh
	bash tools/python/setup-venv.sh $(VENV)

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DPython_EXECUTABLE=$(abspath $(VENV))/bin/python $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

# After the build, the venv imports the package this build assembled (<build>/python).
build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)
	bash tools/python/setup-venv.sh $(VENV) $(BUILD_DIR)

# Probe the devices, then train the reference CNN (samples/mnist_cnn, docs/design.md section 9) for
# 5 epochs on Fashion-MNIST on the best device (a GPU if there is one, else the CPU).
run: build
	$(BUILD_DIR)/bin/dlprobe
	$(BUILD_DIR)/bin/mnist_cnn --epochs 5 --device auto

# The ONNX conformance cases are generated (at test time) with the pinned onnx package from
# PyPI, in a venv made here (tools/onnx-suite/setup-venv.sh). The tests run with the cpu
# plugin's fixed kernel rules (DLRT_CPU_CALIBRATE=skip: no timing decides which kernel a test
# gets, and nothing measured under the suite's load is cached); the calibration's own tests
# ask for it by option.
test: build
	bash tools/onnx-suite/setup-venv.sh $(BUILD_DIR)/venv-onnx
	DLRT_CPU_CALIBRATE=skip ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)

# Rewrite docs/ops.md's op tables from the op schema (core/ops); the test docs.op_table fails
# while they differ.
docs: build
	$(BUILD_DIR)/bin/dlrt-opdocs --write docs/ops.md

# Time one epoch of the reference workload on the CPU with dlbench (tools/dlbench, JSON out)
# beside the same model in PyTorch; docs/benchmarks.md says how to read it. Installs Debian's
# python3-torch first when it is missing (needs root or sudo, as tools/install-deps.sh).
.PHONY: bench
bench: build
	@if ! dpkg-query -W -f='$${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then \
	  sudo=""; if [ "$$(id -u)" -ne 0 ]; then sudo="sudo"; fi; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends python3-torch; \
	fi
	$(BUILD_DIR)/bin/dlbench train --device CPU:0 --epochs 1 --compare-torch

# Re-format the C and C++ sources with the repository's .clang-format (clang-format 14, Debian's
# `clang-format` package). Applied to the whole tree once; run it on what you change.
format:
	git ls-files '*.c' '*.cc' '*.h' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i

# Windows (cross-built, docs/windows.md): libdlrt.dll, the plugins as DLLs, dlprobe.exe and
# the Windows tests in $(WIN_BUILD_DIR), with mingw-w64; `ctest --test-dir $(WIN_BUILD_DIR)`
# runs the tests under wine64. tools/windows-check.sh does this and the tests end to end.
WIN_BUILD_DIR ?= build-win
windows:
	bash tools/windows/install-deps.sh
	cmake -S . -B $(WIN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_TOOLCHAIN_FILE=$(abspath cmake/mingw-w64.cmake) $(WIN_CMAKE_FLAGS)
	cmake --build $(WIN_BUILD_DIR) -j $(JOBS)
