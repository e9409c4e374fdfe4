# cmake/DlrtWindowsDeps.cmake: the third-party libraries of a Windows cross-build
# (cmake/mingw-w64.cmake, docs/windows.md), as the targets the Linux build gets from
# find_package, so the rest of the tree is the same on both.
#
# Debian packages no mingw builds of fmt, Boost, nlohmann-json or CLI11, but the ones used here
# work header-only, so the cross-build uses the build machine's headers (the very versions the
# Linux build uses). /usr/include itself must not be on the mingw include path (its C library
# headers are glibc's), so only those four folders are linked into <build>/windows-include.
# zlib comes from libz-mingw-w64-dev (the mingw sysroot). libpng, protobuf and ONNX have no
# mingw build here: PNG output uses core/io's zlib-only writer and ONNX is off (DLRT_BUILD_ONNX).
# oneDNN comes from PyPI's Windows wheels (below).
set(_dlrt_win_inc ${PROJECT_BINARY_DIR}/windows-include)
file(MAKE_DIRECTORY ${_dlrt_win_inc})
foreach(_d boost fmt nlohmann CLI)
  if(NOT EXISTS /usr/include/${_d})
    message(FATAL_ERROR "Windows cross-build: /usr/include/${_d} is missing; the cross-build "
                        "uses the build machine's header-only ${_d} (tools/install-deps.sh)")
  endif()
  file(CREATE_LINK /usr/include/${_d} ${_dlrt_win_inc}/${_d} SYMBOLIC)
endforeach()

find_package(Threads REQUIRED)

# fmt: its out-of-line part compiled once into a static library (cmake/windows/fmt_compiled.cc
# says why: header-only fmt cost ~5 s in each of ~300 objects), under both target names the tree
# uses. Position-independent, as it is linked into libdlrt.dll and the plugins.
add_library(dlrt_win_fmt STATIC ${PROJECT_SOURCE_DIR}/cmake/windows/fmt_compiled.cc)
target_include_directories(dlrt_win_fmt SYSTEM PUBLIC ${_dlrt_win_inc})
set_target_properties(dlrt_win_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library(fmt::fmt ALIAS dlrt_win_fmt)
add_library(fmt::fmt-header-only ALIAS dlrt_win_fmt)

# Boost.DLL on std::filesystem (BOOST_DLL_USE_STD_FS) needs no compiled Boost library; the
# target keeps the Linux name. BOOST_USE_WINDOWS_H: Boost.WinAPI and <windows.h> then agree
# on every declaration.
add_library(dlrt_win_boost INTERFACE)
target_include_directories(dlrt_win_boost SYSTEM INTERFACE ${_dlrt_win_inc})
target_compile_definitions(dlrt_win_boost INTERFACE BOOST_DLL_USE_STD_FS BOOST_ALL_NO_LIB
                                                    BOOST_USE_WINDOWS_H)
add_library(Boost::filesystem ALIAS dlrt_win_boost)

add_library(dlrt_win_json INTERFACE)
target_include_directories(dlrt_win_json SYSTEM INTERFACE ${_dlrt_win_inc})
add_library(nlohmann_json::nlohmann_json ALIAS dlrt_win_json)

add_library(dlrt_win_cli11 INTERFACE)
target_include_directories(dlrt_win_cli11 SYSTEM INTERFACE ${_dlrt_win_inc})
add_library(CLI11::CLI11 ALIAS dlrt_win_cli11)

# oneDNN for the cpu plugin: PyPI's Windows wheels of oneDNN 2.6 (the API of Debian's 2.6.3 the
# Linux build uses), fetched and unpacked at configure time by tools/windows/fetch-onednn.sh
# (pinned by hash in tools/windows/onednn-wheels.txt). dnnl.dll is MSVC-built and threads with
# Microsoft's OpenMP runtime (vcomp140.dll, part of Windows and of Wine); only its C API
# crosses into our code (dnnl.hpp is inline C++ over it), so mingw links its import library.
set(DLRT_ONEDNN_WIN_DIR ${PROJECT_BINARY_DIR}/onednn-win)
execute_process(COMMAND bash ${PROJECT_SOURCE_DIR}/tools/windows/fetch-onednn.sh
                        ${DLRT_ONEDNN_WIN_DIR}
                RESULT_VARIABLE _dlrt_onednn_rc)
if(NOT _dlrt_onednn_rc EQUAL 0)
  message(FATAL_ERROR "Windows cross-build: fetching oneDNN's Windows wheels from PyPI failed "
                      "(tools/windows/fetch-onednn.sh ${DLRT_ONEDNN_WIN_DIR}, exit "
                      "${_dlrt_onednn_rc}); the cpu plugin needs them")
endif()
add_library(DNNL::dnnl SHARED IMPORTED GLOBAL)
set_target_properties(DNNL::dnnl PROPERTIES
  IMPORTED_LOCATION ${DLRT_ONEDNN_WIN_DIR}/bin/dnnl.dll
  IMPORTED_IMPLIB ${DLRT_ONEDNN_WIN_DIR}/lib/dnnl.lib
  INTERFACE_INCLUDE_DIRECTORIES ${DLRT_ONEDNN_WIN_DIR}/include)

set(ZLIB_USE_STATIC_LIBS ON)  # libz.a: no zlib1.dll to ship beside the programs
find_package(ZLIB REQUIRED)

# Windows headers: no min/max macros (std::min), no rarely used APIs; Windows 8 at least
# (LoadLibraryExW's LOAD_LIBRARY_SEARCH_* flags, job objects' limits).
# _USE_MATH_DEFINES: M_PI and friends, which glibc defines by default and mingw only on request.
add_compile_definitions(NOMINMAX WIN32_LEAN_AND_MEAN _WIN32_WINNT=0x0602 UNICODE _UNICODE
                        _USE_MATH_DEFINES)
# Every .exe and .dll links libgcc, libstdc++, libwinpthread and zlib statically (-static), so
# it needs only Windows' own DLLs and ours beside it (no mingw runtime DLLs to ship or find).
# Only C crosses between our DLLs (dlrt.h, plugin.h), so each having its own C++ runtime is
# safe.
add_link_options(-static)

if(DLRT_BUILD_TESTS)
  # GoogleTest from the sources of Debian's googletest package (no mingw build is packaged).
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
  # Its CMake files define the GTest:: names the tree links (GTest::gtest, GTest::gtest_main).
  add_subdirectory(/usr/src/googletest ${PROJECT_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
endif()
