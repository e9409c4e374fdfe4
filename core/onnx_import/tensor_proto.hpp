// tensor_proto.hpp: ONNX TensorProto -> HostTensor, with ONNX's element types mapped to dlrt's
// and external data read only from inside the model's folder.
#pragma once

#include <cstdint>
#include <string>

#include "onnx_import/host_tensor.hpp"
#include "onnx_import/onnx_proto.hpp"

namespace dlrt::onnx_import {

// The most elements one tensor of a model may hold (2^31: 8 GiB of f32). A header claiming
// more is refused before anything is allocated or read.
constexpr int64_t kMaxTensorElements = int64_t{1} << 31;

// ONNX TensorProto.DataType -> dlrt dtype; UNIMPLEMENTED naming `what` and the ONNX type for
// the types dlrt has no dtype for (strings, complex, 16/32/64-bit unsigned, 8-bit floats).
dlrt_dtype dtype_from_onnx(int32_t onnx_type, const std::string& what);
int32_t onnx_from_dtype(dlrt_dtype dtype);
const char* onnx_type_name(int32_t onnx_type);  // "FLOAT", "INT64", ... ("type 99" unknown)

// Where external data may be read from: the folder of the model file. `folder` empty: the
// model came from bytes, and a tensor with external data is refused.
struct ExternalDataRoot {
  std::string folder;
};

// The tensor's elements, from raw_data, the typed fields, or external data (location, offset,
// length; the location relative and inside root.folder after resolving links). Errors name
// `what` (e.g. "initializer 'conv1.weight'") and what was wrong: a data size that does not
// match dims x element size, a path that leaves the folder, a file shorter than offset+length.
HostTensor read_tensor_proto(const onnx::TensorProto& proto, const ExternalDataRoot& root,
                             const std::string& what);

// proto filled from `t` (raw_data), named `name`: the exporter's way back.
void write_tensor_proto(const HostTensor& t, const std::string& name, onnx::TensorProto* proto);

}  // namespace dlrt::onnx_import
