# Installed layout, as users of oneDNN or ONNX Runtime expect it:
#   lib/libdlrt.so.<ABI major>, lib/dlrt/plugins/libdlrt-*.so, include/dlrt/,
#   lib/cmake/dlrt/dlrtConfig.cmake (targets dlrt::dlrt, dlrt::sdk), lib/pkgconfig/dlrt.pc
include(CMakePackageConfigHelpers)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/dlrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set_target_properties(dlrt_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS dlrt_sdk EXPORT dlrtTargets)
install(EXPORT dlrtTargets NAMESPACE dlrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dlrt)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dlrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dlrtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dlrt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dlrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dlrtConfig.cmake ${PROJECT_BINARY_DIR}/dlrtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dlrt)
# dlrt.pc is relocatable: its prefix is found from the file's own folder (pkg-config's
# ${pcfiledir}), so a tree installed with --prefix, or moved after, still points at itself.
file(RELATIVE_PATH DLRT_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" DLRT_PC_TO_PREFIX "${DLRT_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/dlrt.pc.in ${PROJECT_BINARY_DIR}/dlrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dlrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
