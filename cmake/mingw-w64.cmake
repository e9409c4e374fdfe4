# cmake/mingw-w64.cmake: cross-build dlrt for 64-bit Windows on Debian with mingw-w64
# (g++-mingw-w64-x86-64-posix: GCC with POSIX threads, so std::thread and std::mutex work),
# and run what it builds (tests, try_run) under wine64 (docs/windows.md).
#   cmake -S . -B build-win -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_dlrt_triple x86_64-w64-mingw32)

# The -posix variants: the -win32 ones have no std::thread.
set(CMAKE_C_COMPILER ${_dlrt_triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_dlrt_triple}-g++-posix)
set(CMAKE_RC_COMPILER ${_dlrt_triple}-windres)

# Libraries and headers for the target come from the mingw sysroot only (zlib from
# libz-mingw-w64-dev lives there); programs (ccache, python) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/${_dlrt_triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and gtest_discover_tests run the .exe files through wine (tools/windows/wine-run.sh:
# a private prefix under the build folder, crashes reported as failures).
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../tools/windows/wine-run.sh)
