// tests/conformance/bad_input_test.cc: bad input through the eager op API. Each mistake a
// caller can make — wrong rank, mismatched channels, zero or negative dims, an unknown
// attribute, an attribute of the wrong type, a wrong dtype, the wrong number of inputs or
// outputs, an output tensor of the wrong shape, an input on another device, NULL pointers —
// must come back as INVALID_ARGUMENT (NOT_FOUND for an unknown op) whose message names the
// op and the problem, on every device, and nothing may crash.
//
// The tests make their own context with two reference devices (plugin option
// reference:num_devices=2), so "an input on another device" needs no hardware; the other
// plugins of the build tree load too, and the run-level checks go to every device.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "case.hpp"
#include "driver.hpp"

namespace dlrt::conformance {
namespace {

dlrt_tensor_desc desc(dlrt_dtype dtype, std::initializer_list<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  int k = 0;
  for (int64_t v : dims) d.dims[k++] = v;
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.plugin_options = "reference:num_devices=2";
    dlrt_context* c = nullptr;
    StatusPtr s(dlrt_context_create(&o, &c));
    ctx_.reset(c);
    ASSERT_EQ(s, nullptr) << status_text(s.get());
    for (size_t i = 0; i < dlrt_context_device_count(c); ++i) {
      dlrt_device_info info{};
      info.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
      StatusPtr is(dlrt_context_device_info(c, i, &info));
      ASSERT_EQ(is, nullptr) << status_text(is.get());
      if (std::string(info.platform) == "reference") refs_.push_back(i);
      devices_.push_back(i);
      names_.push_back(info.name);
    }
    ASSERT_GE(refs_.size(), 2u) << "expected two reference devices";
  }

  // A tensor on `device` of desc `d`, holding zeros.
  TensorPtr tensor(size_t device, const dlrt_tensor_desc& d) {
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx_.get(), device, &d, &t));
    EXPECT_EQ(s, nullptr) << status_text(s.get());
    TensorPtr owned(t);
    if (t != nullptr) {
      std::vector<uint8_t> zeros(dlrt_tensor_byte_size(t), 0);
      StatusPtr w(dlrt_tensor_write(t, zeros.data(), zeros.size()));
      EXPECT_EQ(w, nullptr) << status_text(w.get());
    }
    return owned;
  }

  // Infers and (on every device) runs `op` with inputs of `descs` and `attrs`; every call
  // must fail with `code` and a message containing each of `words`.
  void expect_rejected(const std::string& op, const std::vector<dlrt_tensor_desc>& descs,
                       const std::vector<Attr>& attrs, dlrt_code code,
                       const std::vector<std::string>& words, size_t num_outputs = 1) {
    std::vector<const dlrt_tensor_desc*> dp;
    for (const dlrt_tensor_desc& d : descs) dp.push_back(&d);
    std::vector<dlrt_attr> ca;
    for (const Attr& a : attrs) ca.push_back(a.c());
    std::vector<const dlrt_attr*> ap;
    for (const dlrt_attr& a : ca) ap.push_back(&a);

    dlrt_tensor_desc outs[8];
    for (dlrt_tensor_desc& d : outs) {
      d = dlrt_tensor_desc{};
      d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    }
    size_t n = 0;
    StatusPtr inf(dlrt_op_infer(ctx_.get(), op.c_str(), dp.data(), dp.size(), ap.data(), ap.size(),
                                outs, 8, &n));
    check(inf.get(), code, words, "dlrt_op_infer");
    for (size_t dev : devices_) {
      SCOPED_TRACE(names_[dev]);
      StatusPtr sup(dlrt_op_supported(ctx_.get(), op.c_str(), dev, dp.data(), dp.size(), ap.data(),
                                      ap.size()));
      check(sup.get(), code, words, "dlrt_op_supported");
      // Run with real tensors where the descriptors can be created at all.
      std::vector<TensorPtr> in;
      bool creatable = true;
      for (const dlrt_tensor_desc& d : descs) {
        dlrt_tensor* t = nullptr;
        StatusPtr s(dlrt_tensor_create(ctx_.get(), dev, &d, &t));
        in.emplace_back(t);
        if (s) creatable = false;
      }
      if (!creatable) continue;
      std::vector<const dlrt_tensor*> ip;
      for (const TensorPtr& t : in) ip.push_back(t.get());
      dlrt_tensor* out[4] = {nullptr, nullptr, nullptr, nullptr};
      StatusPtr run(dlrt_op_run(ctx_.get(), op.c_str(), dev, ip.data(), ip.size(), ap.data(),
                                ap.size(), out, num_outputs));
      check(run.get(), code, words, "dlrt_op_run");
      for (dlrt_tensor* t : out) {
        EXPECT_EQ(t, nullptr) << "a failed dlrt_op_run left an output behind";
        dlrt_tensor_destroy(t);
      }
    }
  }

  static void check(const dlrt_status* s, dlrt_code code, const std::vector<std::string>& words,
                    const char* call) {
    ASSERT_NE(s, nullptr) << call << " accepted it";
    EXPECT_EQ(dlrt_status_code(s), code) << call << ": " << status_text(s);
    const std::string msg = dlrt_status_message(s);
    for (const std::string& w : words)
      EXPECT_NE(msg.find(w), std::string::npos)
          << call << ": message does not mention \"" << w << "\": " << msg;
  }

  ContextPtr ctx_;
  std::vector<size_t> devices_, refs_;
  std::vector<std::string> names_;
};

TEST_F(BadInput, UnknownOpIsNotFound) {
  expect_rejected("conv3d", {desc(DLRT_F32, {2, 2})}, {}, DLRT_NOT_FOUND, {"conv3d"});
}

TEST_F(BadInput, WrongRank) {
  expect_rejected("conv2d", {desc(DLRT_F32, {5, 5, 3}), desc(DLRT_F32, {3, 3, 3, 4})}, {},
                  DLRT_INVALID_ARGUMENT, {"conv2d", "rank"});
  expect_rejected("matmul", {desc(DLRT_F32, {2, 3, 4}), desc(DLRT_F32, {4, 5})}, {},
                  DLRT_INVALID_ARGUMENT, {"matmul", "rank"});
}

TEST_F(BadInput, MismatchedChannels) {
  expect_rejected("conv2d", {desc(DLRT_F32, {1, 5, 5, 3}), desc(DLRT_F32, {3, 3, 4, 2})}, {},
                  DLRT_INVALID_ARGUMENT, {"conv2d", "channels"});
  expect_rejected("matmul", {desc(DLRT_F32, {2, 3}), desc(DLRT_F32, {4, 5})}, {},
                  DLRT_INVALID_ARGUMENT, {"matmul"});
  expect_rejected("add", {desc(DLRT_F32, {2, 3}), desc(DLRT_F32, {4})}, {}, DLRT_INVALID_ARGUMENT,
                  {"add"});
}

TEST_F(BadInput, ZeroAndNegativeDims) {
  expect_rejected("relu", {desc(DLRT_F32, {2, 0})}, {}, DLRT_INVALID_ARGUMENT, {"relu"});
  expect_rejected("relu", {desc(DLRT_F32, {-3, 2})}, {}, DLRT_INVALID_ARGUMENT, {"relu"});
  expect_rejected("fill", {}, {a_ints("shape", {2, 0})}, DLRT_INVALID_ARGUMENT, {"fill", "shape"});
  // Tensors of such descriptors cannot be made either.
  for (auto d : {desc(DLRT_F32, {2, 0}), desc(DLRT_F32, {-1}), desc(DLRT_DTYPE_INVALID, {2})}) {
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx_.get(), refs_[0], &d, &t));
    EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << status_text(s.get());
    EXPECT_EQ(t, nullptr);
    dlrt_tensor_destroy(t);
  }
}

TEST_F(BadInput, UnknownAttribute) {
  expect_rejected("relu", {desc(DLRT_F32, {4})}, {a_float("alpha", 0.1)}, DLRT_INVALID_ARGUMENT,
                  {"relu", "alpha"});
}

TEST_F(BadInput, AttributeGivenTwice) {
  expect_rejected("conv2d", {desc(DLRT_F32, {1, 5, 5, 3}), desc(DLRT_F32, {3, 3, 3, 4})},
                  {a_str("padding", "SAME"), a_str("padding", "VALID")}, DLRT_INVALID_ARGUMENT,
                  {"conv2d", "padding"});
}

TEST_F(BadInput, AttributeOfTheWrongType) {
  expect_rejected("conv2d", {desc(DLRT_F32, {1, 5, 5, 3}), desc(DLRT_F32, {3, 3, 3, 4})},
                  {a_int("padding", 1)}, DLRT_INVALID_ARGUMENT, {"conv2d", "padding"});
  expect_rejected("matmul", {desc(DLRT_F32, {2, 3}), desc(DLRT_F32, {3, 5})},
                  {a_str("transpose_a", "yes")}, DLRT_INVALID_ARGUMENT, {"matmul", "transpose_a"});
  expect_rejected("conv2d", {desc(DLRT_F32, {1, 5, 5, 3}), desc(DLRT_F32, {3, 3, 3, 4})},
                  {a_str("padding", "FULL")}, DLRT_INVALID_ARGUMENT, {"conv2d", "padding"});
}

TEST_F(BadInput, WrongDtype) {
  expect_rejected("sparse_softmax_cross_entropy", {desc(DLRT_F32, {4, 3}), desc(DLRT_F32, {4})}, {},
                  DLRT_INVALID_ARGUMENT, {"sparse_softmax_cross_entropy", "labels"}, 2);
  expect_rejected("add", {desc(DLRT_F32, {4}), desc(DLRT_I32, {4})}, {}, DLRT_INVALID_ARGUMENT,
                  {"add"});
  expect_rejected("relu", {desc(DLRT_I32, {4})}, {}, DLRT_INVALID_ARGUMENT, {"relu"});
}

TEST_F(BadInput, WrongNumberOfInputs) {
  expect_rejected("add", {desc(DLRT_F32, {4})}, {}, DLRT_INVALID_ARGUMENT, {"add"});
  expect_rejected("relu", {desc(DLRT_F32, {4}), desc(DLRT_F32, {4})}, {}, DLRT_INVALID_ARGUMENT,
                  {"relu"});
}

TEST_F(BadInput, MissingRequiredAttribute) {
  expect_rejected("reshape", {desc(DLRT_F32, {4})}, {}, DLRT_INVALID_ARGUMENT,
                  {"reshape", "shape"});
}

// Run-level mistakes: outputs and devices.
TEST_F(BadInput, OutputOfTheWrongShapeOrDtype) {
  for (size_t dev : devices_) {
    SCOPED_TRACE(names_[dev]);
    TensorPtr x = tensor(dev, desc(DLRT_F32, {2, 3}));
    for (auto bad : {desc(DLRT_F32, {3, 2}), desc(DLRT_F32, {6}), desc(DLRT_I32, {2, 3})}) {
      TensorPtr y = tensor(dev, bad);
      const dlrt_tensor* in[] = {x.get()};
      dlrt_tensor* out[] = {y.get()};
      StatusPtr s(dlrt_op_run(ctx_.get(), "relu", dev, in, 1, nullptr, 0, out, 1));
      check(s.get(), DLRT_INVALID_ARGUMENT, {"relu", "output"}, "dlrt_op_run");
      EXPECT_EQ(out[0], y.get()) << "a caller's output must stay the caller's";
    }
  }
}

TEST_F(BadInput, WrongNumberOfOutputs) {
  TensorPtr x = tensor(refs_[0], desc(DLRT_F32, {4}));
  const dlrt_tensor* in[] = {x.get()};
  dlrt_tensor* out[2] = {nullptr, nullptr};
  StatusPtr s(dlrt_op_run(ctx_.get(), "relu", refs_[0], in, 1, nullptr, 0, out, 2));
  check(s.get(), DLRT_INVALID_ARGUMENT, {"relu"}, "dlrt_op_run");
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(out[1], nullptr);
}

TEST_F(BadInput, InputOnAnotherDevice) {
  TensorPtr a = tensor(refs_[0], desc(DLRT_F32, {4}));
  TensorPtr b = tensor(refs_[1], desc(DLRT_F32, {4}));
  const dlrt_tensor* in[] = {a.get(), b.get()};
  dlrt_tensor* out[] = {nullptr};
  StatusPtr s(dlrt_op_run(ctx_.get(), "add", refs_[0], in, 2, nullptr, 0, out, 1));
  check(s.get(), DLRT_INVALID_ARGUMENT, {"add", "device"}, "dlrt_op_run");
  EXPECT_EQ(out[0], nullptr);
  // An output on another device is the same mistake.
  TensorPtr y = tensor(refs_[1], desc(DLRT_F32, {4}));
  const dlrt_tensor* in2[] = {a.get(), a.get()};
  dlrt_tensor* out2[] = {y.get()};
  StatusPtr s2(dlrt_op_run(ctx_.get(), "add", refs_[0], in2, 2, nullptr, 0, out2, 1));
  check(s2.get(), DLRT_INVALID_ARGUMENT, {"add", "device"}, "dlrt_op_run");
}

TEST_F(BadInput, DeviceIndexOutOfRange) {
  const size_t n = dlrt_context_device_count(ctx_.get());
  dlrt_tensor_desc d = desc(DLRT_F32, {4});
  dlrt_tensor* t = nullptr;
  StatusPtr s(dlrt_tensor_create(ctx_.get(), n, &d, &t));
  EXPECT_NE(s, nullptr);
  EXPECT_EQ(t, nullptr);
  const dlrt_tensor_desc* dp[] = {&d};
  StatusPtr sup(dlrt_op_supported(ctx_.get(), "relu", n, dp, 1, nullptr, 0));
  EXPECT_NE(sup, nullptr);
  EXPECT_NE(dlrt_status_code(sup.get()), DLRT_UNIMPLEMENTED) << status_text(sup.get());
}

TEST_F(BadInput, NullPointersAndSizesDoNotCrash) {
  TensorPtr x = tensor(refs_[0], desc(DLRT_F32, {4}));
  const dlrt_tensor* in[] = {x.get()};
  dlrt_tensor* out[] = {nullptr};
  StatusPtr a(dlrt_op_run(ctx_.get(), nullptr, refs_[0], in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(a.get()), DLRT_INVALID_ARGUMENT) << status_text(a.get());
  StatusPtr b(dlrt_op_run(ctx_.get(), "relu", refs_[0], nullptr, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(b.get()), DLRT_INVALID_ARGUMENT) << status_text(b.get());
  const dlrt_tensor* null_in[] = {nullptr};
  StatusPtr c(dlrt_op_run(ctx_.get(), "relu", refs_[0], null_in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(c.get()), DLRT_INVALID_ARGUMENT) << status_text(c.get());
  StatusPtr d(dlrt_op_run(nullptr, "relu", refs_[0], in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(d.get()), DLRT_INVALID_ARGUMENT) << status_text(d.get());
  EXPECT_EQ(out[0], nullptr);
  // Reading or writing the wrong number of bytes.
  float buf[8] = {};
  StatusPtr w(dlrt_tensor_write(x.get(), buf, 8));
  EXPECT_EQ(dlrt_status_code(w.get()), DLRT_INVALID_ARGUMENT) << status_text(w.get());
  StatusPtr r(dlrt_tensor_read(x.get(), buf, 32));
  EXPECT_EQ(dlrt_status_code(r.get()), DLRT_INVALID_ARGUMENT) << status_text(r.get());
  // A NULL attribute pointer in the list.
  const dlrt_attr* null_attr[] = {nullptr};
  StatusPtr e(dlrt_op_run(ctx_.get(), "relu", refs_[0], in, 1, null_attr, 1, out, 1));
  EXPECT_EQ(dlrt_status_code(e.get()), DLRT_INVALID_ARGUMENT) << status_text(e.get());
  EXPECT_EQ(out[0], nullptr);
}

}  // namespace
}  // namespace dlrt::conformance
