# DlrtPython.cmake: finds the Python the package is built for, and nanobind in it, and sets
# _dlrt_python_default (the default of DLRT_BUILD_PYTHON): ON when both are there.
#
# Which Python: -DPython_EXECUTABLE=... when given (the Makefile gives the README's venv,
# .venv/bin/python, which tools/python/setup-venv.sh fills with nanobind, numpy and pytest),
# else the first python3 on the PATH. nanobind comes from that Python (`python -m nanobind
# --cmake_dir`), never from a copy in this repository. A wheel build (scikit-build-core) sets
# both itself.
set(_dlrt_python_default OFF)
find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
if(Python_FOUND)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE _dlrt_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _dlrt_nanobind_rc ERROR_QUIET)
  if(_dlrt_nanobind_rc EQUAL 0 AND EXISTS "${_dlrt_nanobind_dir}")
    list(APPEND CMAKE_PREFIX_PATH "${_dlrt_nanobind_dir}")
    find_package(nanobind CONFIG QUIET)
  endif()
endif()
if(Python_FOUND AND nanobind_FOUND)
  set(_dlrt_python_default ON)
  message(STATUS "Python package: Python ${Python_VERSION} (${Python_EXECUTABLE}), "
                 "nanobind ${nanobind_VERSION}")
elseif(Python_FOUND)
  message(STATUS "Python package: ${Python_EXECUTABLE} has no nanobind: DLRT_BUILD_PYTHON "
                 "defaults to OFF (`make` makes the venv .venv with it; or pass "
                 "-DPython_EXECUTABLE=<a python with nanobind>)")
else()
  message(STATUS "Python package: no Python with its development headers (python3-dev): "
                 "DLRT_BUILD_PYTHON defaults to OFF")
endif()
