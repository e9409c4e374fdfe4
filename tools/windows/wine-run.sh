#!/bin/bash
# tools/windows/wine-run.sh PROGRAM.exe [ARGS...]: run one cross-built Windows program under
# wine64, the way ctest and gtest_discover_tests do (cmake/mingw-w64.cmake makes this the
# CMAKE_CROSSCOMPILING_EMULATOR).
#
# Why each setting:
#   WINEPREFIX   a private prefix beside the program's build folder (<build>/wine-prefix), never
#                the user's ~/.wine: tests must not depend on, or change, anyone's Wine set-up.
#                Made once (wineboot -i, ~6.5 s), then reused.
#   WINEDLLOVERRIDES=winedbg.exe=d  with Wine's debugger on, a program that crashes is shown
#                in winedbg and the run exits 0; with it off the crash is an exit status != 0,
#                which ctest sees as the failure it is.
#   WINEDEBUG=-all  Wine's own fixme/err chatter would bury the program's output.
#   wineserver -p60  keeps the server alive between programs (each test otherwise pays ~2.7 s
#                to start one); it goes away by itself after 60 s idle.
#   DISPLAY unset: headless; nothing here opens a window.
set -euo pipefail
wine=${DLRT_WINE:-}
if [ -z "$wine" ]; then
  for c in /usr/lib/wine/wine64 "$(command -v wine64 || true)" "$(command -v wine || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then wine=$c; break; fi
  done
fi
if [ -z "$wine" ]; then
  echo "wine-run.sh: no wine64 found (apt-get install wine64; it lives in /usr/lib/wine)" >&2
  exit 127
fi
wineserver=$(dirname "$wine")/wineserver
[ -x "$wineserver" ] || wineserver=$(command -v wineserver || echo wineserver)

prog=$1
shift
# The build folder holds the programs in bin/; the prefix sits beside bin/.
here=$(cd "$(dirname "$prog")" && pwd)
export WINEPREFIX=${WINEPREFIX:-$(dirname "$here")/wine-prefix}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-winedbg.exe=d;mscoree=d;mshtml=d}
export WINEDEBUG=${WINEDEBUG:--all}
unset DISPLAY
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  # Two tests may start at once (ctest -j): one makes the prefix, the other waits for it.
  mkdir -p "$(dirname "$WINEPREFIX")"
  exec 9>"$WINEPREFIX.lock"
  flock 9
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    "$wineserver" -p60 </dev/null >/dev/null 2>&1 || true
    "$wine" wineboot -i </dev/null >/dev/null 2>&1 || true
  fi
  flock -u 9
fi
# Started here, with its standard streams on /dev/null: a server that wine starts itself
# inherits the program's stdout and stderr, and ctest (or a pipe) then waits for it to exit
# before it sees the test end. -p60: it stays 60 s after the last program.
"$wineserver" -p60 </dev/null >/dev/null 2>&1 || true
# The first Windows program of a server's life starts Wine's services (services.exe,
# winedevice.exe, rpcss.exe, ...), which inherit that program's standard streams and live as
# long as the server. Were the program's stdout or stderr a pipe read to its end (ctest,
# gtest_discover_tests' execute_process), the reader would wait for the server to exit and
# time out. So a trivial program starts them first, on /dev/null (0.2 s when they run already).
"$wine" cmd.exe /c exit </dev/null >/dev/null 2>&1 || true
exec "$wine" "$prog" "$@"
