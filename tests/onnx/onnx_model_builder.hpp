// tests/onnx/onnx_model_builder.hpp: small ONNX models built in C++ with ONNX's generated
// classes, for the session tests (no Python needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <onnx/onnx_pb.h>

namespace dlrt::test {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, const std::string& domain = "") {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(opset);
    graph()->set_name("test");
  }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

  // dims: -1 makes a symbolic dim named `sym`.
  void input(const std::string& name, int32_t elem, const std::vector<int64_t>& dims,
             const std::string& sym = "N") {
    value_info(graph()->add_input(), name, elem, dims, sym);
  }
  void output(const std::string& name, int32_t elem = onnx::TensorProto::FLOAT) {
    auto* v = graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t e : v) a->add_ints(e);
  }
  onnx::TensorProto* init(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  onnx::TensorProto* init_int64s(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<int64_t>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return t;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, int32_t elem,
                         const std::vector<int64_t>& dims, const std::string& sym) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param(sym);
      else dim->set_dim_value(d);
    }
  }
  onnx::ModelProto model_;
};

}  // namespace dlrt::test
