#!/usr/bin/env bash
# tools/windows/install-deps.sh: the Debian 12 packages the Windows cross-build needs
# (docs/windows.md), beside those of tools/install-deps.sh (whose header-only fmt, Boost,
# nlohmann-json and CLI11 and googletest sources the cross-build uses too). Skips those
# present; needs root (or sudo).
set -euo pipefail

packages=(
  g++-mingw-w64-x86-64-posix   # the cross compiler (POSIX threads: std::thread, std::mutex)
  libz-mingw-w64-dev           # zlib for Windows (data files, PNG)
  wine64                       # runs the .exe tests (the program is /usr/lib/wine/wine64)
  googletest                   # GoogleTest's sources, built for Windows in the build tree
  python3-venv                 # pip in a venv fetches oneDNN's Windows wheels (fetch-onednn.sh)
  libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  cmake ninja-build ccache
)

bash "$(dirname "$0")/../apt-install.sh" windows/install-deps "${packages[@]}"
