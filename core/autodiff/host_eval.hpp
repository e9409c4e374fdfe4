// host_eval.hpp (test-only): evaluates values of a core::Graph on the host, in f64, with the
// reference kernels — a tiny interpreter so the autodiff tests depend on neither the executor
// nor a plugin.
//
//   HostEval ev(graph);
//   ev.feed(x, {1.0, 2.0});             // placeholders and variables (float values as f64)
//   std::vector<double> g = ev.eval(dx);
//
// Every float value (f32 in the graph) is computed as f64: each op is instantiated by the
// registry with the graph's types (so its attributes are complete and its outputs checked),
// then handed to the reference kernels with f32 operands and dtype attributes promoted to f64.
// Integer values (labels, indices) keep their dtype. Values are computed once and memoised;
// forget() drops everything computed after a feed changes. Unfed variables run their init op.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/op_instance.hpp"
#include "ops/status_matchers.hpp"
#include "reference_kernels.hpp"

namespace dlrt::core::testing {

class HostEval {
 public:
  explicit HostEval(const Graph& graph) : g_(graph) {}

  void feed(ValueRef v, const std::vector<double>& values) {
    Buf b{DLRT_F64, std::vector<uint8_t>(values.size() * sizeof(double))};
    std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
    check_fed(v, b, int64_t(values.size()));
    fed_[v] = std::move(b);
    forget();
  }
  void feed_index(ValueRef v, const std::vector<int64_t>& values) {
    Buf b{g_.type_of(v).dtype, {}};
    for (int64_t x : values) {
      if (b.dtype == DLRT_I32) append(b, int32_t(x));
      else append(b, x);
    }
    check_fed(v, b, int64_t(values.size()));
    fed_[v] = std::move(b);
    forget();
  }
  void forget() { computed_.clear(); }

  // A float value, as doubles (row-major).
  std::vector<double> eval(ValueRef v) {
    const Buf& b = value(v);
    EXPECT_EQ(b.dtype, DLRT_F64) << "eval() reads float values only";
    std::vector<double> out(b.bytes.size() / sizeof(double));
    std::memcpy(out.data(), b.bytes.data(), out.size() * sizeof(double));
    return out;
  }
  double eval_scalar(ValueRef v) { return eval(v).at(0); }

 private:
  struct Buf {
    dlrt_dtype dtype = DLRT_DTYPE_INVALID;
    std::vector<uint8_t> bytes;
  };
  template <typename T>
  static void append(Buf& b, T x) {
    const auto* p = reinterpret_cast<const uint8_t*>(&x);
    b.bytes.insert(b.bytes.end(), p, p + sizeof(T));
  }
  static bool is_float(int32_t d) {
    return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16 || d == DLRT_F64;
  }
  static int32_t promote(int32_t d) { return is_float(d) ? DLRT_F64 : d; }

  void check_fed(ValueRef v, const Buf& b, int64_t n) {
    const ops::TensorType& t = g_.type_of(v);
    if (n != t.num_elements() || (is_float(t.dtype) != (b.dtype == DLRT_F64)))
      throw std::runtime_error("HostEval: feed of " + g_.node(v.node).name + " does not fit " +
                               ops::to_string(t));
  }

  const Buf& value(ValueRef v) {
    if (auto it = fed_.find(v); it != fed_.end()) return it->second;
    if (auto it = computed_.find(v); it != computed_.end()) return it->second;
    const Node& n = g_.node(v.node);
    switch (n.kind) {
      case NodeKind::kPlaceholder:
        throw std::runtime_error("HostEval: placeholder " + n.name + " was not fed");
      case NodeKind::kConstant: {
        const ops::TensorType& t = n.outputs.at(0);
        Buf b{DLRT_DTYPE_INVALID, {}};
        if (t.dtype == DLRT_F32) {
          b.dtype = DLRT_F64;
          std::vector<float> f(size_t(t.num_elements()));
          std::memcpy(f.data(), n.constant_data->data(), f.size() * sizeof(float));
          for (float x : f) append(b, double(x));
        } else {
          b = {t.dtype, *n.constant_data};
        }
        return computed_[v] = std::move(b);
      }
      case NodeKind::kVariable:
        run(v.node, n.init_op, {}, n.init_attrs, n.outputs);
        return computed_.at(v);
      case NodeKind::kOp:
        run(v.node, n.op, n.inputs, n.attrs, n.outputs);
        return computed_.at(v);
    }
    throw std::runtime_error("HostEval: unknown node kind");
  }

  // Runs one op through the reference kernels with float operands promoted to f64.
  void run(NodeId id, const std::string& op, const std::vector<ValueRef>& inputs,
           const ops::AttrMap& attrs, const std::vector<ops::TensorType>& out_types) {
    std::vector<ops::TensorType> in_types;
    std::vector<const void*> in_ptrs;
    for (ValueRef in : inputs) {
      in_types.push_back(g_.type_of(in));
      in_ptrs.push_back(value(in).bytes.data());
    }
    const ops::OpInstance inst =
        ops::testing::value_or_throw(ops::instantiate(op, in_types, attrs), "HostEval");
    const dlrt_op_desc& d = inst.desc();
    // The descriptor again, with f32 -> f64 in operands and dtype attributes.
    std::vector<dlrt_tensor_desc> ins, outs;
    for (size_t i = 0; i < d.num_inputs; ++i) ins.push_back(*d.inputs[i]);
    for (size_t i = 0; i < d.num_outputs; ++i) outs.push_back(*d.outputs[i]);
    std::vector<dlrt_attr> at;
    for (size_t i = 0; i < d.num_attrs; ++i) at.push_back(*d.attrs[i]);
    for (auto& t : ins) t.dtype = promote(t.dtype);
    for (auto& t : outs) t.dtype = promote(t.dtype);
    for (auto& a : at)
      if (a.type == DLRT_ATTR_DTYPE) a.i = promote(int32_t(a.i));
    std::vector<const dlrt_tensor_desc*> in_p, out_p;
    std::vector<const dlrt_attr*> at_p;
    for (auto& t : ins) in_p.push_back(&t);
    for (auto& t : outs) out_p.push_back(&t);
    for (auto& a : at) at_p.push_back(&a);
    dlrt_op_desc pd = d;
    pd.inputs = in_p.data();
    pd.outputs = out_p.data();
    pd.attrs = at_p.data();

    std::vector<Buf> results(out_types.size());
    std::vector<void*> out_ptrs;
    for (size_t k = 0; k < results.size(); ++k) {
      results[k].dtype = dlrt_dtype(promote(out_types[k].dtype));
      results[k].bytes.resize(size_t(out_types[k].num_elements()) *
                              plugin::dtype_size(results[k].dtype));
      out_ptrs.push_back(results[k].bytes.data());
    }
    plugin::OpView view(&pd);
    reference::check_supported(view);
    reference::run(view, in_ptrs.data(), out_ptrs.data(), 0);
    for (size_t k = 0; k < results.size(); ++k)
      computed_[{id, uint32_t(k)}] = std::move(results[k]);
  }

  const Graph& g_;
  std::map<ValueRef, Buf> fed_, computed_;
};

}  // namespace dlrt::core::testing
