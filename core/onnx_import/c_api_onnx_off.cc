// c_api_onnx_off.cc: the ONNX functions of dlrt.h and onnx_ops.h in a libdlrt built without
// ONNX (DLRT_BUILD_ONNX off: no protobuf for the target, as in the Windows cross-build; see
// docs/windows.md). The functions stay exported, so a program built against dlrt.h links and
// runs everywhere; each call that would need a model says that this build has none, as an
// error value, and the op table is empty. The real ones are c_api_onnx.cc and c_api_onnx_ops.cc.
#include <dlrt/dlrt.h>
#include <dlrt/onnx_ops.h>

namespace {

constexpr const char* kNoOnnx =
    "this libdlrt was built without ONNX support (DLRT_BUILD_ONNX=OFF: no protobuf/ONNX "
    "library for the target, e.g. the Windows cross-build); ONNX import and export need a "
    "build with them (docs/windows.md)";

dlrt_status* no_onnx() { return dlrt_status_create(DLRT_UNIMPLEMENTED, kNoOnnx); }

}  // namespace

DLRT_API void dlrt_session_options_init(dlrt_session_options* options) {
  // Filled as the real one fills it: a caller may init options before learning ONNX is off.
  if (options == nullptr) return;
  *options = dlrt_session_options{};
  options->struct_size = sizeof(*options);
  options->soft_placement = -1;
  options->log_device_placement = -1;
  options->optimize = -1;
}

DLRT_API dlrt_status* dlrt_session_create_from_onnx(dlrt_context*, const char*,
                                                    const dlrt_session_options*,
                                                    dlrt_session** out_session) {
  if (out_session != nullptr) *out_session = nullptr;
  return no_onnx();
}

DLRT_API dlrt_status* dlrt_session_create_from_onnx_bytes(dlrt_context*, const void*, size_t,
                                                          const dlrt_session_options*,
                                                          dlrt_session** out_session) {
  if (out_session != nullptr) *out_session = nullptr;
  return no_onnx();
}

// No session can exist in this build, so there is nothing to destroy, count or run.
DLRT_API void dlrt_session_destroy(dlrt_session*) {}
DLRT_API size_t dlrt_session_input_count(const dlrt_session*) { return 0; }
DLRT_API size_t dlrt_session_output_count(const dlrt_session*) { return 0; }
DLRT_API dlrt_status* dlrt_session_input(const dlrt_session*, size_t, dlrt_session_io*) {
  return no_onnx();
}
DLRT_API dlrt_status* dlrt_session_output(const dlrt_session*, size_t, dlrt_session_io*) {
  return no_onnx();
}
DLRT_API dlrt_status* dlrt_session_run(dlrt_session*, const dlrt_tensor* const*, size_t,
                                       dlrt_tensor**, size_t) {
  return no_onnx();
}
DLRT_API dlrt_executable* dlrt_session_executable(dlrt_session*) { return nullptr; }

DLRT_API dlrt_status* dlrt_graph_export_onnx(dlrt_graph*, const dlrt_value*, const char* const*,
                                             size_t, const dlrt_value*, const char* const*,
                                             size_t, int32_t, const char*) {
  return no_onnx();
}

// The table of ONNX ops this build converts: none.
DLRT_API size_t dlrt_onnx_op_count(void) { return 0; }
DLRT_API const char* dlrt_onnx_op_name(size_t) { return nullptr; }
DLRT_API const char* dlrt_onnx_op_maps_to(size_t) { return nullptr; }
DLRT_API size_t dlrt_onnx_op_dlrt_op_count(size_t) { return 0; }
DLRT_API const char* dlrt_onnx_op_dlrt_op(size_t, size_t) { return nullptr; }
