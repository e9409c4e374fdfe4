#!/bin/sh
# install_tree.sh BUILD_DIR: installs the build into a fresh prefix (cmake --install
# --prefix), moves that tree elsewhere, and checks that it still works where it landed:
#   - dlrt.pc is relocatable: pkg-config with PKG_CONFIG_PATH=<moved>/lib/pkgconfig answers
#     -I<moved>/include and -L<moved>/lib;
#   - a C++ program compiled and linked with those flags (and its own rpath) runs and loads
#     the moved tree's plugins;
#   - dlrt-nn.pc is too: a Keras-style program (dlrt/nn.hpp) built with `pkg-config dlrt-nn`
#     links libdlrt_nn and trains a step;
#   - the installed tools and samples (bin/dlprobe, bin/mnist_cnn) find libdlrt and the
#     plugins through their RUNPATH ($ORIGIN/../lib), without LD_LIBRARY_PATH.
# Exit 0 when all hold, else 1 naming what failed.
set -u
build=${1:?usage: install_tree.sh BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_tree: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
mv "$tmp/first" "$tmp/moved"
root="$tmp/moved"
libdir=$(ls -d "$root"/lib*/pkgconfig | head -n 1)
[ -f "$libdir/dlrt.pc" ] || fail "no dlrt.pc under $root/lib*/pkgconfig"
for f in dlprobe dlbench mnist_cnn resnet char_transformer vae dcgan; do
  [ -x "$root/bin/$f" ] || fail "bin/$f is not installed"
done

if command -v pkg-config >/dev/null 2>&1; then
  cflags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags dlrt) || fail "pkg-config --cflags dlrt failed"
  libs=$(PKG_CONFIG_PATH="$libdir" pkg-config --libs dlrt) || fail "pkg-config --libs dlrt failed"
  echo "pkg-config: $cflags $libs"
  # The paths go through ${pcfiledir} ("lib/pkgconfig/../../include"): compare them resolved.
  incdir=$(echo "$cflags" | sed -n 's/.*-I\([^ ]*\).*/\1/p')
  libpath=$(echo "$libs" | sed -n 's/.*-L\([^ ]*\).*/\1/p')
  [ "$(cd "$incdir" 2>/dev/null && pwd -P)" = "$(cd "$root/include" && pwd -P)" ] ||
    fail "--cflags '$cflags' does not point at $root/include"
  [ -e "$libpath/libdlrt.so" ] && [ "$(cd "$libpath" && pwd -P)" = "$(cd "$libdir/.." && pwd -P)" ] ||
    fail "--libs '$libs' does not point at the moved tree's libdlrt.so"
  cat > "$tmp/hello.cc" <<'CC'
#include <dlrt/dlrt.hpp>
#include <iostream>
int main() {
  dlrt::Context ctx;
  std::cout << "devices: " << ctx.device_count() << "\n";
  return ctx.device_count() > 0 ? 0 : 1;
}
CC
  # shellcheck disable=SC2086
  c++ -std=c++17 $cflags "$tmp/hello.cc" -o "$tmp/hello" $libs -Wl,-rpath,"$libpath" ||
    fail "a program built with pkg-config's flags did not compile or link"
  "$tmp/hello" || fail "a program built with pkg-config's flags found no device"

  nn_flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs dlrt-nn) || fail "pkg-config dlrt-nn failed"
  cat > "$tmp/fit.cc" <<'CC'
#include <dlrt/nn.hpp>
#include <iostream>
namespace nn = dlrt::nn;
int main() {
  dlrt::Context ctx;
  nn::Sequential model(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
  model.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true));
  nn::Array x = nn::Array::of<float>({6, 4}, std::vector<float>(24, 0.5f));
  nn::Array y = nn::Array::of<int32_t>({6}, {0, 1, 2, 0, 1, 2});
  nn::FitOptions o;
  o.batch_size = 3;
  o.progress.verbose = 0;
  std::cout << "loss: " << model.fit(x, y, o).last("loss") << "\n";
}
CC
  # shellcheck disable=SC2086
  c++ "$tmp/fit.cc" -o "$tmp/fit" $nn_flags -Wl,-rpath,"$libpath" ||
    fail "an nn program built with pkg-config dlrt-nn's flags did not compile or link"
  "$tmp/fit" | grep -q '^loss: [0-9]' || fail "an nn program built with pkg-config dlrt-nn's flags did not train"
  ldd "$tmp/fit" | grep -q "libdlrt_nn.so" || fail "the nn program does not link libdlrt_nn"
else
  echo "install_tree: pkg-config is not installed; the .pc check is skipped"
fi

env -u LD_LIBRARY_PATH "$root/bin/dlprobe" >"$tmp/probe.txt" 2>&1 || { cat "$tmp/probe.txt"; fail "installed dlprobe failed"; }
grep -q "$root/lib/dlrt/plugins/libdlrt-cpu.so" "$tmp/probe.txt" || { cat "$tmp/probe.txt"; fail "installed dlprobe did not load the moved tree's cpu plugin"; }
env -u LD_LIBRARY_PATH "$root/bin/mnist_cnn" --help >/dev/null 2>&1 || fail "installed mnist_cnn does not start"
echo "install_tree: ok (installed, moved to $root, pkg-config, RUNPATH and plugins work)"
