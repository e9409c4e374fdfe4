// test_util.hpp: builds a dlrt_op_desc by hand for the reference kernel tests, and runs it.
//
//   TestOp op("conv2d");
//   op.in(DLRT_F32, {1, 3, 3, 1}).in(DLRT_F32, {2, 2, 1, 1}).out(DLRT_F32, {1, 2, 2, 1})
//     .ints("strides", {1, 1}).str("padding", "VALID");
//   std::vector<float> y = op.run_f32({x, w})[0];
//
// view() hands the kernels what the core would: the hand-built descriptor goes through the op
// schema first (ops::instantiate_desc fills defaults, turns "padding" into explicit "pads" and
// checks the given outputs against the inferred ones), because the kernels trust exactly that
// (docs/design.md, "What a plugin may trust"). raw_view() skips the schema, for the tests of
// OpView itself. Test-only. Holds all the storage the descriptor points into.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/op_instance.hpp"
#include "reference_kernels.hpp"

namespace dlrt::reference::testing {

class TestOp {
 public:
  explicit TestOp(std::string name) : name_(std::move(name)) {}

  TestOp& in(int32_t dtype, std::vector<int64_t> dims) {
    return add(inputs_, dtype, std::move(dims));
  }
  TestOp& out(int32_t dtype, std::vector<int64_t> dims) {
    return add(outputs_, dtype, std::move(dims));
  }

  TestOp& i(const char* name, int64_t v) { return attr(name, DLRT_ATTR_INT, v, 0.0); }
  TestOp& f(const char* name, double v) { return attr(name, DLRT_ATTR_FLOAT, 0, v); }
  TestOp& b(const char* name, bool v) { return attr(name, DLRT_ATTR_BOOL, v ? 1 : 0, 0.0); }
  TestOp& dtype(const char* name, int32_t v) { return attr(name, DLRT_ATTR_DTYPE, v, 0.0); }
  TestOp& str(const char* name, const std::string& v) {
    strings_.push_back(v);
    attr(name, DLRT_ATTR_STRING, 0, 0.0);
    attrs_.back().s = strings_.back().c_str();
    return *this;
  }
  TestOp& ints(const char* name, std::vector<int64_t> v) {
    int_lists_.push_back(std::move(v));
    attr(name, DLRT_ATTR_INTS, 0, 0.0);
    attrs_.back().ints = int_lists_.back().data();
    attrs_.back().count = int_lists_.back().size();
    return *this;
  }

  // The descriptor (valid while this TestOp lives and is not modified).
  const dlrt_op_desc* desc() {
    in_ptrs_.clear(), out_ptrs_.clear(), attr_ptrs_.clear();
    for (auto& t : inputs_) in_ptrs_.push_back(&t);
    for (auto& t : outputs_) out_ptrs_.push_back(&t);
    for (auto& a : attrs_) attr_ptrs_.push_back(&a);
    desc_ = {DLRT_STRUCT_SIZE(dlrt_op_desc),
             name_.c_str(),
             in_ptrs_.size(),
             in_ptrs_.data(),
             out_ptrs_.size(),
             out_ptrs_.data(),
             attr_ptrs_.size(),
             attr_ptrs_.data()};
    return &desc_;
  }
  OpView view() {
    dlrt::ops::Result<dlrt::ops::OpInstance> inst = dlrt::ops::instantiate_desc(*desc());
    if (!inst.ok()) inst = instantiate_f32_twin();
    if (!inst.ok()) {
      ADD_FAILURE() << name_
                    << ": the op schema refuses the test's descriptor: " << inst.status().message();
      throw std::runtime_error("bad test descriptor");
    }
    dlrt_op_desc d = *desc();
    d.num_attrs = inst->desc().num_attrs;
    d.attrs = inst->desc().attrs;
    return OpView(&d);  // OpView copies what it needs while `inst` lives
  }
  OpView raw_view() { return OpView(desc()); }

  // Checks the op, runs it on raw buffers.
  void run_raw(const std::vector<const void*>& ins, const std::vector<void*>& outs,
               uint64_t rng_offset = 0) {
    OpView v = view();
    check_supported(v);
    run(v, ins.data(), outs.data(), rng_offset);
  }

  // Runs with typed host vectors (T = float or double); returns the outputs.
  template <typename T>
  std::vector<std::vector<T>> run_typed(const std::vector<std::vector<T>>& ins,
                                        uint64_t rng_offset = 0) {
    OpView v = view();
    check_supported(v);
    std::vector<const void*> in_ptrs;
    for (size_t k = 0; k < ins.size(); ++k) {
      EXPECT_EQ(static_cast<int64_t>(ins[k].size()), v.input(k).numel) << name_ << " input " << k;
      in_ptrs.push_back(ins[k].data());
    }
    std::vector<std::vector<T>> outs(v.num_outputs());
    std::vector<void*> out_ptrs;
    for (size_t k = 0; k < outs.size(); ++k) {
      outs[k].assign(static_cast<size_t>(v.output(k).numel), T(-12345));
      out_ptrs.push_back(outs[k].data());
    }
    run(v, in_ptrs.data(), out_ptrs.data(), rng_offset);
    return outs;
  }
  std::vector<std::vector<float>> run_f32(const std::vector<std::vector<float>>& ins,
                                          uint64_t rng = 0) {
    return run_typed<float>(ins, rng);
  }
  std::vector<std::vector<double>> run_f64(const std::vector<std::vector<double>>& ins,
                                           uint64_t rng = 0) {
    return run_typed<double>(ins, rng);
  }

 private:
  // The schema admits f64 for few ops, but the oracle's f64 kernels are what the gradient
  // tests check against finite differences. Shapes and attributes do not depend on the float
  // dtype, so the schema may see the f32 twin (f64 operands and dtype attributes as f32) and
  // the kernels get the f64 operands with the schema's attributes.
  dlrt::ops::Result<dlrt::ops::OpInstance> instantiate_f32_twin() {
    auto f32 = [](int32_t d) { return d == DLRT_F64 ? int32_t{DLRT_F32} : d; };
    dlrt_op_desc twin = *desc();
    std::vector<dlrt_tensor_desc> tin, tout;
    std::vector<dlrt_attr> tattrs;
    std::vector<const dlrt_tensor_desc*> pin, pout;
    std::vector<const dlrt_attr*> pattrs;
    for (auto* t : in_ptrs_) tin.push_back(*t), tin.back().dtype = f32(t->dtype);
    for (auto* t : out_ptrs_) tout.push_back(*t), tout.back().dtype = f32(t->dtype);
    for (auto* a : attr_ptrs_) {
      tattrs.push_back(*a);
      if (a->type == DLRT_ATTR_DTYPE) tattrs.back().i = f32(static_cast<int32_t>(a->i));
    }
    for (auto& t : tin) pin.push_back(&t);
    for (auto& t : tout) pout.push_back(&t);
    for (auto& a : tattrs) pattrs.push_back(&a);
    twin.inputs = pin.data(), twin.outputs = pout.data(), twin.attrs = pattrs.data();
    return dlrt::ops::instantiate_desc(twin);
  }
  TestOp& add(std::deque<dlrt_tensor_desc>& list, int32_t dtype, std::vector<int64_t> dims) {
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    d.dtype = dtype;
    d.rank = static_cast<int32_t>(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) d.dims[k] = dims[k];
    d.layout = DLRT_LAYOUT_DENSE;
    list.push_back(d);
    return *this;
  }
  TestOp& attr(const char* name, int32_t type, int64_t iv, double fv) {
    names_.emplace_back(name);
    dlrt_attr a{};
    a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
    a.name = names_.back().c_str();
    a.type = type;
    a.i = iv;
    a.f = fv;
    attrs_.push_back(a);
    return *this;
  }

  std::string name_;
  std::deque<dlrt_tensor_desc> inputs_, outputs_;  // deques: pointers stay valid as they grow
  std::deque<dlrt_attr> attrs_;
  std::deque<std::string> names_, strings_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::vector<const dlrt_tensor_desc*> in_ptrs_, out_ptrs_;
  std::vector<const dlrt_attr*> attr_ptrs_;
  dlrt_op_desc desc_{};
};

// Expect two float vectors equal within `tol` (absolute), with the index in the message.
template <typename T, typename U>
void expect_near(const std::vector<T>& got, const std::vector<U>& want, double tol,
                 const char* what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(double(got[k]), double(want[k]), tol) << what << " [" << k << "]";
}

}  // namespace dlrt::reference::testing
