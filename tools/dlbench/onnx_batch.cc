// onnx_batch.cc: see onnx_batch.hpp. Uses ONNX's generated classes (libonnx_proto), as the
// importer does; nothing here parses protobuf by hand.
#include "onnx_batch.hpp"

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>

#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

namespace dlbench {

namespace {

// The fixed first dim of a value's declared shape; 0 where it is symbolic, unknown or rank 0.
int64_t fixed_first_dim(const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return 0;
  const onnx::TensorShapeProto& s = v.type().tensor_type().shape();
  if (s.dim_size() == 0 || !s.dim(0).has_dim_value()) return 0;
  return s.dim(0).dim_value();
}

void set_first_dim(onnx::ValueInfoProto* v, int64_t batch) {
  v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(batch);
}

// Sets element 0 of an INT64 shape initializer to `batch` when it is b0; true if it changed.
bool rewrite_shape(onnx::TensorProto* t, int64_t b0, int64_t batch) {
  if (t->data_type() != onnx::TensorProto::INT64 || t->dims_size() != 1 || t->dims(0) < 1)
    return false;
  if (t->int64_data_size() > 0) {
    if (t->int64_data(0) != b0) return false;
    t->set_int64_data(0, batch);
    return true;
  }
  std::string* raw = t->mutable_raw_data();
  if (raw->size() < sizeof(int64_t)) return false;
  int64_t first = 0;
  raw->copy(reinterpret_cast<char*>(&first), sizeof first, 0);  // little-endian, as ONNX stores
  if (first != b0) return false;
  raw->replace(0, sizeof batch, reinterpret_cast<const char*>(&batch), sizeof batch);
  return true;
}

}  // namespace

BatchedModel model_for_batch(const std::string& path, int64_t batch) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open the model '" + path + "'");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw std::runtime_error("'" + path + "' is not an ONNX model (ModelProto does not parse)");
  onnx::GraphProto* g = model.mutable_graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : g->initializer()) initializers.insert(t.name());

  BatchedModel out;
  for (const onnx::ValueInfoProto& in : g->input()) {
    if (initializers.count(in.name())) continue;
    const int64_t b = fixed_first_dim(in);
    if (b == 0) continue;
    if (out.original_batch != 0 && out.original_batch != b)
      throw std::runtime_error("'" + path + "': the inputs fix different first dims (" +
                               std::to_string(out.original_batch) + " and " +
                               std::to_string(b) + "), so dlbench cannot tell the batch");
    out.original_batch = b;
  }
  const int64_t b0 = out.original_batch;
  if (b0 == 0 || b0 == batch) {
    out.bytes = bytes;
    return out;
  }
  for (onnx::ValueInfoProto& in : *g->mutable_input())
    if (!initializers.count(in.name()) && fixed_first_dim(in) == b0) set_first_dim(&in, batch);
  for (onnx::ValueInfoProto& o : *g->mutable_output())
    if (fixed_first_dim(o) == b0) set_first_dim(&o, batch);
  g->clear_value_info();
  std::set<std::string> shapes;  // the Reshapes' shape inputs
  for (const onnx::NodeProto& n : g->node())
    if (n.op_type() == "Reshape" && n.input_size() >= 2) shapes.insert(n.input(1));
  for (onnx::TensorProto& t : *g->mutable_initializer())
    if (shapes.count(t.name())) rewrite_shape(&t, b0, batch);
  for (onnx::NodeProto& n : *g->mutable_node())  // shapes made by Constant nodes
    if (n.op_type() == "Constant" && n.output_size() == 1 && shapes.count(n.output(0)))
      for (onnx::AttributeProto& a : *n.mutable_attribute())
        if (a.name() == "value" && a.has_t()) rewrite_shape(a.mutable_t(), b0, batch);
  out.rewritten = true;
  if (!model.SerializeToString(&out.bytes))
    throw std::runtime_error("'" + path + "': the rewritten model does not serialise");
  return out;
}

}  // namespace dlbench
