# dlrt_add_plugin(<name> SOURCES ... [OUTPUT_DIR dir])
# Builds libdlrt-<name>.so as a MODULE: hidden visibility, exporting only dlrt_plugin_init
# (cmake/plugin.map), written to lib/dlrt/plugins (or OUTPUT_DIR) of the build tree and
# installed to lib/dlrt/plugins. Plugins link the SDK headers, never libdlrt.
function(dlrt_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR" "SOURCES" ${ARGN})
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${DLRT_PLUGIN_OUTPUT_DIR})
  endif()
  set(target dlrt-plugin-${name})
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "dlrt-${name}"
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE dlrt::sdk dlrt_plugin_support)
  if(WIN32)
    # libdlrt-<name>.dll: a DLL exports only what is marked dllexport (DLRT_PLUGIN_EXPORT on
    # dlrt_plugin_init), and leaves no symbol undefined, so the version script has no job here.
    # A MODULE gets no import library, which is right: nothing links a plugin.
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
  else()
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map"
    "LINKER:--no-undefined")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/plugin.map)
  endif()
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/dlrt/plugins)
  endif()
endfunction()
