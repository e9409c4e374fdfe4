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
  libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  cmake ninja-build ccache
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "windows/install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "windows/install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
