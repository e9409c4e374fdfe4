// model.hpp: an ONNX model file read and checked (OnnxModel): the ModelProto parsed with
// protobuf into ONNX's generated classes, its opsets, its real inputs and outputs, and its
// nodes in an order where every input is made before it is used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlrt/types.h>

#include "onnx_import/onnx_proto.hpp"

namespace dlrt::onnx_import {

// The default-domain opsets the importer reads ("" or "ai.onnx").
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 28;
// The largest model file (protobuf's own limit for one message).
constexpr uint64_t kMaxModelBytes = uint64_t{2} << 30;

// An input or output of the model: dims -1 where the model names a symbolic dim ("N") or
// gives none; dim_names[i] the symbol ("" for a fixed dim).
struct ModelIo {
  std::string name;
  dlrt_dtype dtype = DLRT_F32;
  bool has_shape = false;  // false: the model gives no shape (any rank accepted)
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

struct OnnxModel {
  onnx::ModelProto proto;
  std::string folder;  // the model file's folder (external data); "" when read from bytes
  int64_t opset = 0;   // the default domain's version
  std::vector<ModelIo> inputs;   // graph inputs without an initializer of the same name
  std::vector<ModelIo> outputs;
  std::vector<int> order;        // node indices, producers before consumers
};

// Errors: NOT_FOUND (no file), INVALID_ARGUMENT (not a ModelProto, no graph, an undefined
// input name, a cycle, a name made twice, an opset below 7), UNIMPLEMENTED (an opset above 23,
// a node of another domain, a tensor type dlrt has no dtype for); each names the node or value.
OnnxModel load_model_file(const std::string& path);
OnnxModel load_model_bytes(const void* data, size_t size);

}  // namespace dlrt::onnx_import
