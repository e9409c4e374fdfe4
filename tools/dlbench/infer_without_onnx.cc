// infer_without_onnx.cc: `dlbench infer` in a build without ONNX import (DLRT_BUILD_ONNX off:
// the Windows cross-build, which has no protobuf). infer.cc needs ONNX's classes to rewrite
// a model's batch size; here the subcommand exists and says why it cannot run.
#include <stdexcept>

#include "bench.hpp"

namespace dlbench {

json run_infer(const InferOptions& options) {
  throw std::runtime_error("dlbench infer " + options.model +
                           ": this build of dlrt has no ONNX import (DLRT_BUILD_ONNX is off: "
                           "no protobuf for this system); time ONNX models with a Linux build");
}

}  // namespace dlbench
