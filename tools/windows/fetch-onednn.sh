#!/usr/bin/env bash
# tools/windows/fetch-onednn.sh DEST: oneDNN for Windows, from PyPI's wheels
# (tools/windows/onednn-wheels.txt, pinned by version and hash), unpacked into DEST:
#   DEST/include/   dnnl.hpp and the rest (oneapi/dnnl/...)
#   DEST/lib/dnnl.lib   the import library (MSVC's format; mingw's linker reads it)
#   DEST/bin/dnnl.dll   the library, placed beside the cpu plugin by the build
#   DEST/LICENSE        oneDNN's licence (Apache-2.0), shipped with the DLL
# The CMake configure step of the cross-build runs it (cmake/DlrtWindowsDeps.cmake). Does
# nothing when DEST already holds this pin's files. pip runs from a small venv in DEST
# (Debian's python is externally managed); its download cache makes a second fetch offline.
set -euo pipefail
dest="${1:?usage: fetch-onednn.sh DEST}"
here="$(cd "$(dirname "$0")" && pwd)"
pins="$here/onednn-wheels.txt"
stamp="$dest/.fetched"
want="$(sha256sum "$pins" | cut -d' ' -f1)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dest/bin/dnnl.dll" ]; then
  exit 0
fi
mkdir -p "$dest"
if [ ! -x "$dest/venv/bin/pip" ]; then
  python3 -m venv "$dest/venv" || {
    echo "fetch-onednn: 'python3 -m venv' failed; install Debian's python3-venv" >&2
    exit 1
  }
fi
rm -rf "$dest/wheels"
# Windows wheels on a Linux machine: --platform with --only-binary; --no-deps because the
# pins name both wheels (the devel wheel requires the other).
"$dest/venv/bin/pip" download --disable-pip-version-check --quiet --no-deps \
  --platform win_amd64 --only-binary=:all: --require-hashes -r "$pins" -d "$dest/wheels"
# A wheel is a zip; its files sit under <name>.data/data/Library/.
"$dest/venv/bin/python" - "$dest" <<'PY'
import pathlib, shutil, sys, zipfile
dest = pathlib.Path(sys.argv[1])
for part in ("include", "lib", "bin"):
    shutil.rmtree(dest / part, ignore_errors=True)
wanted = {"include/", "lib/dnnl.lib", "bin/dnnl.dll", "share/doc/onednn/LICENSE"}
for wheel in sorted((dest / "wheels").glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            head, sep, rel = name.partition("/data/Library/")
            if not sep or name.endswith("/"):
                continue
            if not any(rel == w or (w.endswith("/") and rel.startswith(w)) for w in wanted):
                continue
            out = dest / ("LICENSE" if rel.endswith("LICENSE") else rel)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
for need in ("include/oneapi/dnnl/dnnl.hpp", "lib/dnnl.lib", "bin/dnnl.dll", "LICENSE"):
    if not (dest / need).is_file():
        sys.exit(f"fetch-onednn: the wheels in {dest / 'wheels'} hold no {need}")
PY
echo "$want" >"$stamp"
echo "fetch-onednn: oneDNN for Windows in $dest"
