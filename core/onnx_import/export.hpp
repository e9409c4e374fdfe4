// export.hpp: a dlrt graph's inference subgraph written as an ONNX model (opset 17), so
// onnxruntime, the ONNX checker and dlrt's own importer run it: nn::Model::save_onnx and
// dlrt_graph_export_onnx.
//
// The subgraph is what computes `outputs` from `inputs` (placeholders); variables are written
// with their current values as initializers, constants as initializers. dlrt's NHWC ops
// become ONNX's NCHW ones between Transpose nodes (HWIO filters are transposed to OIHW once,
// on the host); onnxruntime removes the transposes that cancel. With `symbolic_batch`, dim 0
// of every input and output is the symbol "N", and a reshape that keeps dim 0 says so (0).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

struct dlrt_graph;

namespace dlrt::onnx_import {

struct ExportIo {
  core::ValueRef value;
  std::string name;  // the ONNX graph input/output name
};

// Throws core Error: UNIMPLEMENTED naming the node for a dlrt op without an ONNX form yet,
// INVALID_ARGUMENT for an input that is not a placeholder or a value the inputs do not reach.
std::string export_onnx_bytes(dlrt_graph& graph, const std::vector<ExportIo>& inputs,
                              const std::vector<ExportIo>& outputs, bool symbolic_batch);

}  // namespace dlrt::onnx_import
