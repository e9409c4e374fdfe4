// dlrt/dlrt.hpp: the C++ layer over the host C API (dlrt.h). Header-only, C++17.
//
// What it is: a thin wrapper in the style of oneDNN's dnnl.hpp and ONNX Runtime's
// onnxruntime_cxx_api.h.
//   - Owners (Context, Tensor, Graph, Executable, Strategy, SafeTensors, IdxArray) are
//     move-only and hold one C handle in a std::unique_ptr whose deleter calls the matching
//     dlrt_*_destroy (error.hpp's detail::Owner).
//   - Info types (PluginInfo, DeviceInfo, Setting, DeviceSpec, NodePlacement) are plain
//     values: their strings and numbers are copied out of the C structs, so they stay valid
//     after the context is gone.
//   - Each method makes one C call and passes its status to `check`, which throws
//     `dlrt::Error` (code + message) and frees the status. Nothing else is cached or added:
//     the C library is the single source of truth.
// What it is not: a second API. Everything here is reachable from C; `get()` hands out the
// C handle for anything the C++ layer does not cover.
//
// This header only includes the per-concept headers; each of them also compiles on its own
// (tests/sdk_headers checks that), so a file may include just what it uses:
//   error.hpp            Error, check(), the owner of C handles
//   version.hpp          version(), abi_version()
//   names.hpp            names of the C enums (code_name, dtype_name, ...)
//   device_spec.hpp      DeviceSpec ("/job:.../device:GPU:0" parsed and formatted)
//   context_info.hpp     Attr, PluginInfo, MemoryStats, DeviceInfo, Setting
//   context_options.hpp  ContextOptions
//   op_attr.hpp          OpAttr, OpAttrs
//   op_info.hpp          OpSupport, OpInfo, op_list()
//   tensor_desc.hpp      (detail) dense descs, the dtype of a C++ type
//   context.hpp          Context: plugins, devices, eager ops, settings
//   tensor.hpp           Tensor
//   value.hpp            Value, one output of a graph node
//   executable.hpp       CompileOptions, NodePlacement, Executable
//   graph.hpp            Graph, DeviceScope
//   strategy.hpp         StrategyOptions, Strategy (data parallel collectives)
//   idx.hpp              IdxArray, read_idx()
//   safetensors.hpp      SafeTensorView, SafeTensors, write_safetensors()
//   inference_session.hpp  SessionOptions, SessionIo, InferenceSession (ONNX models)
// The Keras-style layer on top is dlrt/nn.hpp.
//
// Extending it: a new C handle type gets a detail::Deleter overload (error.hpp) and a
// move-only class holding detail::Owner<dlrt_x>, with one checked C call per method, in the
// header of its concept (or a new one, listed here and included below).
#ifndef DLRT_DLRT_HPP_
#define DLRT_DLRT_HPP_

#include "dlrt/context.hpp"
#include "dlrt/context_info.hpp"
#include "dlrt/context_options.hpp"
#include "dlrt/device_spec.hpp"
#include "dlrt/error.hpp"
#include "dlrt/executable.hpp"
#include "dlrt/graph.hpp"
#include "dlrt/idx.hpp"
#include "dlrt/image.hpp"
#include "dlrt/inference_session.hpp"
#include "dlrt/names.hpp"
#include "dlrt/op_attr.hpp"
#include "dlrt/op_info.hpp"
#include "dlrt/safetensors.hpp"
#include "dlrt/strategy.hpp"
#include "dlrt/tensor.hpp"
#include "dlrt/tensor_desc.hpp"
#include "dlrt/value.hpp"
#include "dlrt/version.hpp"

#endif  // DLRT_DLRT_HPP_
