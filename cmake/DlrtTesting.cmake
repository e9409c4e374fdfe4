# cmake/DlrtTesting.cmake: what the GoogleTest programs of both builds share.
#
# DLRT_TEST_PLUGIN_DIR: the build tree's plugin folder as the tests name it. Linux: the path.
# The Windows cross-build runs its tests under Wine (docs/windows.md), where the Linux root is
# drive Z:, and the loader takes absolute Windows paths only, so the same folder is Z:<path>.
if(WIN32)
  set(DLRT_TEST_PLUGIN_DIR "Z:${DLRT_PLUGIN_OUTPUT_DIR}")
else()
  set(DLRT_TEST_PLUGIN_DIR "${DLRT_PLUGIN_OUTPUT_DIR}")
endif()

# dlrt_gtest(<target>): registers a GoogleTest program's tests with CTest. Linux: one CTest
# test per GoogleTest case (gtest_discover_tests at test time). Windows: the whole program as
# one test named windows.<target>, run under Wine by the cross-build's emulator: discovering
# cases starts the program under Wine once more, and each case would pay a Wine start (a
# failing case is still named in the output).
function(dlrt_gtest target)
  if(WIN32)
    add_test(NAME windows.${target} COMMAND ${target})
    set_tests_properties(windows.${target} PROPERTIES
      FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]|crashed|Unhandled exception" TIMEOUT 900)
  else()
    gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST ${ARGN})
  endif()
endfunction()
