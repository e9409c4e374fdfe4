// node_context.hpp: what an op converter sees of the model while the importer walks it.
//
// Every ONNX value (by name) is a Slot: a host constant (an initializer, a Constant node, or a
// value folded at import: shapes, ConstantOfShape weights) or a dlrt graph Value. Converters
// fold on the host when their inputs are constants and the op is data movement or shape
// arithmetic, and build dlrt ops otherwise. Shapes are static: the importer builds one graph
// per set of input shapes (the session specialises symbolic dims), so every dim is known.
#pragma once

#include <dlrt/graph.hpp>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_import/host_tensor.hpp"
#include "onnx_import/onnx_proto.hpp"

namespace dlrt::onnx_import {

struct Slot {
  std::optional<HostTensor> host;  // set: a constant known at import
  dlrt::Value value;               // the graph value (made from host on first use)
  dlrt_dtype dtype = DLRT_F32;
  std::vector<int64_t> dims;
  // Set when made by a Transpose of `transposed_from` with `perm`: a Transpose of this
  // composes with it (and vanishes when the two cancel, as exported NHWC models' do).
  std::optional<dlrt::Value> transposed_from;
  std::vector<int64_t> perm;
};

class Importer;
struct ImportOptions;

class NodeContext {
 public:
  NodeContext(Importer& importer, const onnx::NodeProto& node, int64_t opset)
      : importer_(importer), node_(node), opset_(opset) {}

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  dlrt::Graph& graph();
  const ImportOptions& options() const;

  // ---- inputs (an optional input given as "" is absent) ----
  size_t num_inputs() const { return static_cast<size_t>(node_.input_size()); }
  bool has_input(size_t i) const { return i < num_inputs() && !node_.input(static_cast<int>(i)).empty(); }
  const Slot& slot(size_t i);                 // INVALID_ARGUMENT when absent
  const HostTensor* host(size_t i);           // nullptr when not a constant (or absent)
  const HostTensor& require_host(size_t i, const char* role);  // UNIMPLEMENTED when not constant
  dlrt::Value value(size_t i);                // the graph value (constants are made on first use)
  dlrt_dtype dtype(size_t i) { return slot(i).dtype; }
  const std::vector<int64_t>& dims(size_t i) { return slot(i).dims; }
  int64_t rank(size_t i) { return static_cast<int64_t>(slot(i).dims.size()); }
  // How many nodes (and graph outputs) read output `k` of this node.
  int uses_of_output(size_t k) const;
  int uses_of_input(size_t i) const;

  // ---- outputs ----
  size_t num_outputs() const { return static_cast<size_t>(node_.output_size()); }
  bool wants_output(size_t k) const { return k < num_outputs() && !node_.output(static_cast<int>(k)).empty(); }
  void set(size_t k, dlrt::Value v);
  void set_host(size_t k, HostTensor t);
  void set_slot(size_t k, Slot s);  // e.g. Identity: the input's slot, unchanged

  // ---- attributes ----
  bool has_attr(const char* name) const;
  int64_t attr_int(const char* name, int64_t dflt) const;
  float attr_float(const char* name, float dflt) const;
  std::string attr_string(const char* name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const char* name, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(const char* name, std::vector<float> dflt = {}) const;
  std::vector<std::string> attr_strings(const char* name) const;  // empty when absent
  const onnx::TensorProto* attr_tensor(const char* name) const;  // nullptr when absent
  HostTensor attr_host_tensor(const char* name);                  // read through read_tensor_proto

  // ---- building ----
  // Adds a dlrt op named after this node; returns its outputs.
  std::vector<dlrt::Value> ops(const std::string& op, const std::vector<dlrt::Value>& inputs,
                               const dlrt::OpAttrs& attrs = {}, size_t max_outputs = 8);
  dlrt::Value op(const std::string& op, const std::vector<dlrt::Value>& inputs,
                 const dlrt::OpAttrs& attrs = {});
  dlrt::Value constant(const HostTensor& t);
  dlrt::Value scalar(dlrt_dtype dtype, double v);  // a rank-0 constant
  dlrt::Value reshape(dlrt::Value x, const std::vector<int64_t>& dims);

  // ---- errors: "node 'name' (OpType): <why>" ----
  [[noreturn]] void unsupported(const std::string& why) const;
  [[noreturn]] void invalid(const std::string& why) const;
  std::string label() const;
  // A negative axis counted from the end, checked against rank r.
  int64_t axis(int64_t a, int64_t r) const;

 private:
  Importer& importer_;
  const onnx::NodeProto& node_;
  int64_t opset_;
};

// Layout (importer.cc): dlrt's convolutions are fastest NHWC, ONNX's are NCHW. A Conv with
// constant weights runs NHWC on a Transpose of its input, and hands on its output as the NCHW
// view of the NHWC value: a Slot whose value is the Transpose and whose transposed_from is the
// NHWC value. Ops that can, read the NHWC value instead (nhwc_source) and hand on a view again
// (pools, BN, Relu, Add/Sum, binary ops with a per-channel constant, Concat on C, global
// pooling); every other op reads the view, so
// the result is the same either way.
Slot nchw_view(NodeContext& c, dlrt::Value nhwc);
std::optional<dlrt::Value> nhwc_source(NodeContext& c, size_t i);

// Offsets into the flattened input 0 of the elements input `indices` names along `axis`
// (GatherElements, ScatterElements; convert_shape.cc).
dlrt::Value element_offsets(NodeContext& c, size_t indices, int64_t axis);

// UNIMPLEMENTED for a Cast/CastLike from f32/f64 to bf16 (convert_shape.cc says why).
void refuse_rounding_to_bf16(NodeContext& c, dlrt_dtype from, dlrt_dtype to);

// One converter per ONNX op type; it reads the node through NodeContext and sets every
// output the node names (wants_output).
using Converter = std::function<void(NodeContext&)>;

struct ConverterInfo {
  Converter convert;
  std::string maps_to;  // what it becomes, for `dlprobe --ops --onnx` and docs/onnx.md
};

class ConverterTable {
 public:
  void add(const std::string& onnx_op, std::string maps_to, Converter c) {
    table_[onnx_op] = ConverterInfo{std::move(c), std::move(maps_to)};
  }
  const ConverterInfo* find(const std::string& onnx_op) const {
    auto it = table_.find(onnx_op);
    return it == table_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, ConverterInfo>& all() const { return table_; }

 private:
  std::map<std::string, ConverterInfo> table_;
};

// Every converter (convert_*.cc add theirs).
const ConverterTable& converters();
void add_elementwise_converters(ConverterTable& t);
void add_nn_converters(ConverterTable& t);
void add_shape_converters(ConverterTable& t);
void add_reduce_converters(ConverterTable& t);
void add_more_converters(ConverterTable& t);
void add_loss_converters(ConverterTable& t);
void add_generator_converters(ConverterTable& t);  // windows, CenterCropPad
void add_rnn_converters(ConverterTable& t);        // RNN, GRU, LSTM unrolled
void add_quantize_converters(ConverterTable& t);   // (De)QuantizeLinear, DynamicQuantizeLinear
void add_scatter_converters(ConverterTable& t);    // ScatterElements, Scatter, ScatterND, GatherND
void add_einsum_converters(ConverterTable& t);     // Einsum

}  // namespace dlrt::onnx_import
