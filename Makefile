# The README's two commands. Each does everything on a fresh Debian 12 machine:
# install missing packages, configure, build, then run or test.
#   make run   probe the devices, then train the reference model on the best device
#   make test  the whole CTest suite
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test clean

all: build

deps:
	bash tools/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Probe the devices, then train the reference CNN (samples/mnist_cnn, DESIGN.md section 9) for
# 5 epochs on Fashion-MNIST on the best device (a GPU if there is one, else the CPU).
run: build
	$(BUILD_DIR)/bin/dlprobe
	$(BUILD_DIR)/bin/mnist_cnn --epochs 5 --device auto

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
