// eager_test.cc: tensors and eager op execution through the C API, against this build tree's
// real plugins (cpu and reference), plus the internals the C API cannot show: the kernel
// cache's counters and tensor memory accounting.
//
// The test binary links the core's objects, not libdlrt.so, so libdlrt's default plugin
// folder would be next to this binary; the plugin folder of the build is passed explicitly
// instead (the same folder default search finds from lib/libdlrt.so).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "context.hpp"
#include "eager.hpp"
#include "ops/op_registry.hpp"
#include "tensor.hpp"

#ifndef DLRT_TEST_PLUGIN_DIR
#error "DLRT_TEST_PLUGIN_DIR (the build tree's plugin folder) must be defined by the build"
#endif

namespace {

struct StatusFree {
  void operator()(dlrt_status* s) const { dlrt_status_free(s); }
};
using StatusPtr = std::unique_ptr<dlrt_status, StatusFree>;
struct TensorFree {
  void operator()(dlrt_tensor* t) const { dlrt_tensor_destroy(t); }
};
using TensorPtr = std::unique_ptr<dlrt_tensor, TensorFree>;
struct ContextFree {
  void operator()(dlrt_context* c) const { dlrt_context_destroy(c); }
};
using ContextPtr = std::unique_ptr<dlrt_context, ContextFree>;

std::string text(const dlrt_status* s) {
  return s == nullptr
             ? "OK"
             : std::string(dlrt_code_name(dlrt_status_code(s))) + ": " + dlrt_status_message(s);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

dlrt_tensor_desc desc(dlrt_dtype dtype, std::vector<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d.dims[i] = dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

dlrt_attr attr_string(const char* name, const char* value) {
  dlrt_attr a{};
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name;
  a.type = DLRT_ATTR_STRING;
  a.s = value;
  return a;
}

dlrt_attr attr_float(const char* name, double value) {
  dlrt_attr a{};
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name;
  a.type = DLRT_ATTR_FLOAT;
  a.f = value;
  return a;
}

class Eager : public ::testing::Test {
 protected:
  // A context on the build tree's plugins; `plugin_options` as dlrt_context_options has them.
  static ContextPtr make_context(const char* plugin_options = nullptr,
                                 const dlrt_logical_device_config* logical = nullptr,
                                 size_t num_logical = 0) {
    const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.plugin_paths = paths;
    o.num_plugin_paths = 1;
    o.search_default_paths = 0;
    o.visible_devices = "";  // all, whatever DLRT_VISIBLE_DEVICES says
    o.plugin_options = plugin_options != nullptr ? plugin_options : "";
    o.logical_devices = logical;
    o.num_logical_devices = num_logical;
    dlrt_context* c = nullptr;
    StatusPtr s(dlrt_context_create(&o, &c));
    EXPECT_EQ(s, nullptr) << text(s.get());
    return ContextPtr(c);
  }

  void SetUp() override {
    ctx_ = make_context();
    ASSERT_NE(ctx_, nullptr);
    cpu_ = find("CPU:0");
    ref_ = find("REF:0");
  }

  size_t find(const char* spec) {
    size_t i = 0;
    StatusPtr s(dlrt_context_find_device(ctx_.get(), spec, &i));
    EXPECT_EQ(s, nullptr) << text(s.get());
    return i;
  }

  TensorPtr tensor(size_t device, const dlrt_tensor_desc& d,
                   const std::vector<float>& values = {}) {
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx_.get(), device, &d, &t));
    EXPECT_EQ(s, nullptr) << text(s.get());
    if (t != nullptr && !values.empty()) {
      StatusPtr w(dlrt_tensor_write(t, values.data(), values.size() * sizeof(float)));
      EXPECT_EQ(w, nullptr) << text(w.get());
    }
    return TensorPtr(t);
  }

  static std::vector<float> read(const dlrt_tensor* t) {
    std::vector<float> v(dlrt_tensor_byte_size(t) / sizeof(float));
    StatusPtr s(dlrt_tensor_read(t, v.data(), v.size() * sizeof(float)));
    EXPECT_EQ(s, nullptr) << text(s.get());
    return v;
  }

  static std::vector<float> random_values(size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(gen);
    return v;
  }

  // Runs `op` on `device` with fresh inputs of `descs` holding `values`; one created output.
  std::vector<float> run1(size_t device, const char* op, const std::vector<dlrt_tensor_desc>& descs,
                          const std::vector<std::vector<float>>& values,
                          const std::vector<dlrt_attr>& attrs = {}) {
    std::vector<TensorPtr> in;
    std::vector<const dlrt_tensor*> ip;
    for (size_t i = 0; i < descs.size(); ++i) {
      in.push_back(tensor(device, descs[i], values[i]));
      ip.push_back(in.back().get());
    }
    std::vector<const dlrt_attr*> ap;
    for (const dlrt_attr& a : attrs) ap.push_back(&a);
    dlrt_tensor* out[1] = {nullptr};
    StatusPtr s(
        dlrt_op_run(ctx_.get(), op, device, ip.data(), ip.size(), ap.data(), ap.size(), out, 1));
    EXPECT_EQ(s, nullptr) << text(s.get());
    TensorPtr y(out[0]);
    return y ? read(y.get()) : std::vector<float>{};
  }

  ContextPtr ctx_;
  size_t cpu_ = 0, ref_ = 0;
};

TEST_F(Eager, TensorRoundTrip) {
  for (size_t dev : {cpu_, ref_}) {
    const std::vector<float> v = random_values(2 * 3 * 5, 1);
    TensorPtr t = tensor(dev, desc(DLRT_F32, {2, 3, 5}), v);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(dlrt_tensor_byte_size(t.get()), v.size() * sizeof(float));
    EXPECT_EQ(dlrt_tensor_device_index(t.get()), dev);
    dlrt_tensor_desc got{};
    got.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    StatusPtr s(dlrt_tensor_get_desc(t.get(), &got));
    ASSERT_EQ(s, nullptr) << text(s.get());
    EXPECT_EQ(got.dtype, DLRT_F32);
    EXPECT_EQ(got.rank, 3);
    EXPECT_EQ(got.dims[2], 5);
    EXPECT_EQ(got.layout, DLRT_LAYOUT_DENSE);
    EXPECT_EQ(read(t.get()), v);
  }
  // A scalar, and other dtypes.
  TensorPtr scalar = tensor(ref_, desc(DLRT_F32, {}), {2.5f});
  EXPECT_EQ(dlrt_tensor_byte_size(scalar.get()), 4u);
  EXPECT_EQ(read(scalar.get()), std::vector<float>{2.5f});
  TensorPtr bytes = tensor(cpu_, desc(DLRT_U8, {3}));
  EXPECT_EQ(dlrt_tensor_byte_size(bytes.get()), 3u);
}

TEST_F(Eager, TensorCreateRejectsBadDescriptors) {
  for (dlrt_tensor_desc d : {desc(DLRT_F32, {2, 0}), desc(DLRT_DTYPE_INVALID, {2}),
                             desc(static_cast<dlrt_dtype>(99), {2})}) {
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx_.get(), ref_, &d, &t));
    EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
    EXPECT_EQ(t, nullptr);
  }
  dlrt_tensor_desc priv = desc(DLRT_F32, {2});
  priv.layout = DLRT_LAYOUT_DEVICE_PRIVATE;
  dlrt_tensor* t = nullptr;
  StatusPtr s(dlrt_tensor_create(ctx_.get(), ref_, &priv, &t));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "dense")) << text(s.get());
  dlrt_tensor_desc ok = desc(DLRT_F32, {2});
  s.reset(dlrt_tensor_create(ctx_.get(), 1000, &ok, &t));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_OUT_OF_RANGE) << text(s.get());
  // A wrong byte count for write/read.
  TensorPtr x = tensor(ref_, ok);
  float buf[4] = {};
  s.reset(dlrt_tensor_write(x.get(), buf, sizeof buf));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  s.reset(dlrt_tensor_read(x.get(), buf, 4));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
}

TEST_F(Eager, ReluMatmulConv2dAgreeOnCpuAndReference) {
  struct Case {
    const char* op;
    std::vector<dlrt_tensor_desc> descs;
    std::vector<dlrt_attr> attrs;
  };
  const dlrt_attr same = attr_string("padding", "SAME");
  const std::vector<Case> cases = {
      {"relu", {desc(DLRT_F32, {4, 7})}, {}},
      {"matmul", {desc(DLRT_F32, {5, 6}), desc(DLRT_F32, {6, 3})}, {}},
      {"conv2d", {desc(DLRT_F32, {2, 8, 8, 3}), desc(DLRT_F32, {3, 3, 3, 4})}, {}},
      {"conv2d", {desc(DLRT_F32, {1, 7, 7, 2}), desc(DLRT_F32, {3, 3, 2, 5})}, {same}},
  };
  unsigned seed = 10;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<std::vector<float>> values;
    for (const dlrt_tensor_desc& d : c.descs) {
      size_t n = 1;
      for (int a = 0; a < d.rank; ++a) n *= static_cast<size_t>(d.dims[a]);
      values.push_back(random_values(n, seed++));
    }
    const std::vector<float> on_cpu = run1(cpu_, c.op, c.descs, values, c.attrs);
    const std::vector<float> on_ref = run1(ref_, c.op, c.descs, values, c.attrs);
    ASSERT_EQ(on_cpu.size(), on_ref.size());
    ASSERT_FALSE(on_ref.empty());
    for (size_t i = 0; i < on_ref.size(); ++i) EXPECT_NEAR(on_cpu[i], on_ref[i], 1e-4) << i;
  }
  // relu by hand, so "agree" is not "both wrong".
  const std::vector<float> y = run1(ref_, "relu", {desc(DLRT_F32, {4})}, {{-1, 0, 2, -3}});
  EXPECT_EQ(y, (std::vector<float>{0, 0, 2, 0}));
}

TEST_F(Eager, CreatedAndCallerProvidedOutputs) {
  for (size_t dev : {cpu_, ref_}) {
    TensorPtr x = tensor(dev, desc(DLRT_F32, {2, 2}), {-1, 2, -3, 4});
    const dlrt_tensor* in[] = {x.get()};
    // NULL slot: created, owned by us.
    dlrt_tensor* out[1] = {nullptr};
    StatusPtr s(dlrt_op_run(ctx_.get(), "relu", dev, in, 1, nullptr, 0, out, 1));
    ASSERT_EQ(s, nullptr) << text(s.get());
    ASSERT_NE(out[0], nullptr);
    TensorPtr created(out[0]);
    EXPECT_EQ(dlrt_tensor_device_index(created.get()), dev);
    EXPECT_EQ(read(created.get()), (std::vector<float>{0, 2, 0, 4}));
    // Caller-provided: written in place, the slot keeps our tensor.
    TensorPtr mine = tensor(dev, desc(DLRT_F32, {2, 2}), {9, 9, 9, 9});
    dlrt_tensor* out2[1] = {mine.get()};
    s.reset(dlrt_op_run(ctx_.get(), "relu", dev, in, 1, nullptr, 0, out2, 1));
    ASSERT_EQ(s, nullptr) << text(s.get());
    EXPECT_EQ(out2[0], mine.get());
    EXPECT_EQ(read(mine.get()), (std::vector<float>{0, 2, 0, 4}));
  }
}

TEST_F(Eager, InPlaceUpdateMayAliasItsInput) {
  // sgd_update: output 0 (param) may be input 0 (param), output 1 (velocity) input 2.
  TensorPtr p = tensor(ref_, desc(DLRT_F32, {3}), {1, 2, 3});
  TensorPtr g = tensor(ref_, desc(DLRT_F32, {3}), {1, 1, 1});
  TensorPtr v = tensor(ref_, desc(DLRT_F32, {3}), {0, 0, 0});
  TensorPtr lr = tensor(ref_, desc(DLRT_F32, {}), {0.5f});  // an input since version 2
  const dlrt_tensor* in[] = {p.get(), g.get(), v.get(), lr.get()};
  dlrt_tensor* out[] = {p.get(), v.get()};
  StatusPtr s(dlrt_op_run(ctx_.get(), "sgd_update", ref_, in, 4, nullptr, 0, out, 2));
  ASSERT_EQ(s, nullptr) << text(s.get());
  EXPECT_EQ(read(p.get()), (std::vector<float>{0.5f, 1.5f, 2.5f}));
  // relu may not write over its input.
  const dlrt_tensor* in2[] = {g.get()};
  dlrt_tensor* out2[] = {g.get()};
  s.reset(dlrt_op_run(ctx_.get(), "relu", ref_, in2, 1, nullptr, 0, out2, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "same tensor as input 0")) << text(s.get());
}

TEST_F(Eager, KernelCacheCreatesOneKernelPerDescriptor) {
  dlrt::core::Eager& eager = ctx_->eager();
  for (size_t dev : {cpu_, ref_}) {
    SCOPED_TRACE(dev);
    EXPECT_EQ(eager.kernels_created(dev), 0u);
    for (int k = 0; k < 3; ++k) run1(dev, "relu", {desc(DLRT_F32, {4})}, {{1, -1, 2, -2}});
    EXPECT_EQ(eager.kernels_created(dev), 1u) << "repeated runs of one descriptor";
    run1(dev, "relu", {desc(DLRT_F32, {5})}, {{1, -1, 2, -2, 3}});
    EXPECT_EQ(eager.kernels_created(dev), 2u) << "another shape is another kernel";
    run1(dev, "relu", {desc(DLRT_F32, {5})}, {{1, -1, 2, -2, 3}});
    EXPECT_EQ(eager.kernels_created(dev), 2u);
    // An attribute value is part of the key too.
    const std::vector<dlrt_tensor_desc> conv = {desc(DLRT_F32, {1, 5, 5, 1}),
                                                desc(DLRT_F32, {3, 3, 1, 1})};
    const std::vector<std::vector<float>> vals = {random_values(25, 3), random_values(9, 4)};
    run1(dev, "conv2d", conv, vals);
    run1(dev, "conv2d", conv, vals, {attr_string("padding", "VALID")});  // the default: same key
    EXPECT_EQ(eager.kernels_created(dev), 3u);
    run1(dev, "conv2d", conv, vals, {attr_string("padding", "SAME")});
    EXPECT_EQ(eager.kernels_created(dev), 4u);
    EXPECT_EQ(eager.kernels_cached(dev), 4u);
  }
}

TEST_F(Eager, KernelKeyTellsDescriptorsApart) {
  auto key = [](const char* op, std::vector<dlrt::ops::TensorType> in,
                dlrt::ops::AttrMap attrs = {}) {
    auto inst = dlrt::ops::instantiate(op, in, attrs);
    EXPECT_TRUE(inst.ok()) << inst.status().to_string();
    return dlrt::core::kernel_key(inst->desc());
  };
  using dlrt::ops::TensorType;
  const TensorType a{DLRT_F32, {2, 3}}, b{DLRT_F32, {3, 2}}, h{DLRT_F16, {2, 3}};
  EXPECT_EQ(key("relu", {a}), key("relu", {a}));
  EXPECT_NE(key("relu", {a}), key("relu", {b}));
  EXPECT_NE(key("relu", {a}), key("relu", {h}));
  EXPECT_NE(key("relu", {a}), key("sigmoid", {a}));
  EXPECT_NE(key("dropout", {a}, {{"rate", 0.5}}), key("dropout", {a}, {{"rate", 0.25}}));
  EXPECT_NE(key("dropout", {a}, {{"rate", 0.5}}),
            key("dropout", {a}, {{"rate", 0.5}, {"seed", 1}}));
}

TEST_F(Eager, RandomOpsDrawFreshNumbersEveryRun) {
  std::vector<int64_t> shape = {8};
  dlrt_attr s{};
  s.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  s.name = "shape";
  s.type = DLRT_ATTR_INTS;
  s.ints = shape.data();
  s.count = 1;
  const uint64_t before = ctx_->eager().runs();
  const std::vector<float> first = run1(ref_, "random_uniform", {}, {}, {s});
  const std::vector<float> second = run1(ref_, "random_uniform", {}, {}, {s});
  EXPECT_EQ(ctx_->eager().runs(), before + 2);
  ASSERT_EQ(first.size(), 8u);
  EXPECT_NE(first, second) << "rng_offset must advance between runs";
}

// ---- errors ---------------------------------------------------------------------------------

TEST_F(Eager, Errors) {
  TensorPtr x = tensor(ref_, desc(DLRT_F32, {2, 3}), {1, 2, 3, 4, 5, 6});
  const dlrt_tensor* in[] = {x.get()};
  dlrt_tensor* out[1] = {nullptr};

  StatusPtr s(dlrt_op_run(ctx_.get(), "conv3d", ref_, in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_NOT_FOUND) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "conv3d")) << text(s.get());

  TensorPtr w = tensor(ref_, desc(DLRT_F32, {3, 3, 3, 4}));
  const dlrt_tensor* conv_in[] = {x.get(), w.get()};
  s.reset(dlrt_op_run(ctx_.get(), "conv2d", ref_, conv_in, 2, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "conv2d") && contains(text(s.get()), "rank"))
      << text(s.get());

  const dlrt_attr alpha = attr_float("alpha", 0.1);
  const dlrt_attr* attrs[] = {&alpha};
  s.reset(dlrt_op_run(ctx_.get(), "relu", ref_, in, 1, attrs, 1, out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "alpha")) << text(s.get());

  TensorPtr wrong = tensor(ref_, desc(DLRT_F32, {3, 2}));
  dlrt_tensor* wrong_out[] = {wrong.get()};
  s.reset(dlrt_op_run(ctx_.get(), "relu", ref_, in, 1, nullptr, 0, wrong_out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "output 0 (y) is f32(3,2), expected f32(2,3)"))
      << text(s.get());
  EXPECT_EQ(wrong_out[0], wrong.get());

  TensorPtr on_cpu = tensor(cpu_, desc(DLRT_F32, {2, 3}));
  const dlrt_tensor* mixed[] = {x.get(), on_cpu.get()};
  s.reset(dlrt_op_run(ctx_.get(), "add", ref_, mixed, 2, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "input 1 (b) is on device /device:CPU:0") &&
              contains(text(s.get()), "/device:REF:0"))
      << text(s.get());

  s.reset(dlrt_op_run(ctx_.get(), "relu", ref_, in, 1, nullptr, 0, out, 2));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_EQ(out[0], nullptr) << "a failed run leaves its created outputs NULL";
  EXPECT_EQ(ctx_->eager().live_tensors(), 4u) << "and frees them";
}

TEST_F(Eager, UnsupportedOpOnARestrictedReferenceDevice) {
  ContextPtr ctx = make_context("reference:ops=relu");
  ASSERT_NE(ctx, nullptr);
  size_t ref = 0;
  StatusPtr s(dlrt_context_find_device(ctx.get(), "REF:0", &ref));
  ASSERT_EQ(s, nullptr) << text(s.get());
  dlrt_tensor_desc d = desc(DLRT_F32, {4});
  dlrt_tensor* x = nullptr;
  s.reset(dlrt_tensor_create(ctx.get(), ref, &d, &x));
  ASSERT_EQ(s, nullptr) << text(s.get());
  TensorPtr xo(x);
  const dlrt_tensor* in[] = {x};
  dlrt_tensor* out[1] = {nullptr};
  s.reset(dlrt_op_run(ctx.get(), "sigmoid", ref, in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_UNIMPLEMENTED) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "sigmoid on /device:REF:0: ")) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "restricted")) << "the plugin's reason: " << text(s.get());
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(ctx->eager().live_tensors(), 1u);
  s.reset(dlrt_op_run(ctx.get(), "relu", ref, in, 1, nullptr, 0, out, 1));
  EXPECT_EQ(s, nullptr) << text(s.get());
  TensorPtr y(out[0]);
  // The probe says the same.
  s.reset(dlrt_op_probe(ctx.get(), "sigmoid", ref));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_UNIMPLEMENTED) << text(s.get());
  s.reset(dlrt_op_probe(ctx.get(), "relu", ref));
  EXPECT_EQ(s, nullptr) << text(s.get());
}

// ---- infer, supported, probe, listing ---------------------------------------------------------

TEST_F(Eager, InferGivesOutputDescriptors) {
  const dlrt_tensor_desc x = desc(DLRT_F32, {1, 8, 8, 3}), w = desc(DLRT_F32, {3, 3, 3, 4});
  const dlrt_tensor_desc* in[] = {&x, &w};
  dlrt_tensor_desc outs[2];
  for (dlrt_tensor_desc& o : outs) {
    o = dlrt_tensor_desc{};
    o.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  }
  size_t n = 0;
  StatusPtr s(dlrt_op_infer(ctx_.get(), "conv2d", in, 2, nullptr, 0, outs, 2, &n));
  ASSERT_EQ(s, nullptr) << text(s.get());
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(outs[0].rank, 4);
  EXPECT_EQ(outs[0].dims[1], 6);
  EXPECT_EQ(outs[0].dims[3], 4);
  // Too little room: the count still comes back.
  const dlrt_tensor_desc logits = desc(DLRT_F32, {4, 3}), labels = desc(DLRT_I32, {4});
  const dlrt_tensor_desc* sce[] = {&logits, &labels};
  s.reset(
      dlrt_op_infer(ctx_.get(), "sparse_softmax_cross_entropy", sce, 2, nullptr, 0, outs, 1, &n));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_EQ(n, 2u);
}

TEST_F(Eager, SupportedAndProbe) {
  const dlrt_tensor_desc x = desc(DLRT_F32, {4});
  const dlrt_tensor_desc* in[] = {&x};
  StatusPtr s(dlrt_op_supported(ctx_.get(), "relu", ref_, in, 1, nullptr, 0));
  EXPECT_EQ(s, nullptr) << text(s.get());
  s.reset(dlrt_op_supported(ctx_.get(), "relu", 1000, in, 1, nullptr, 0));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_OUT_OF_RANGE) << text(s.get());
  s.reset(dlrt_op_probe(ctx_.get(), "conv3d", ref_));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_NOT_FOUND) << text(s.get());
  for (size_t i = 0; i < dlrt_op_count(); ++i) {
    s.reset(dlrt_op_probe(ctx_.get(), dlrt_op_name(i), ref_));
    EXPECT_EQ(s, nullptr) << dlrt_op_name(i) << ": " << text(s.get());
  }
}

TEST(EagerOps, ListMatchesTheRegistry) {
  ASSERT_EQ(dlrt_op_count(), dlrt::ops::all_ops().size());
  EXPECT_EQ(std::string(dlrt_op_name(0)), dlrt::ops::all_ops()[0]->name);
  for (size_t i = 0; i < dlrt_op_count(); ++i) {
    ASSERT_NE(dlrt_op_name(i), nullptr);
    EXPECT_NE(std::string(dlrt_op_doc(i)), "") << dlrt_op_name(i);
  }
  EXPECT_EQ(dlrt_op_name(dlrt_op_count()), nullptr);
  EXPECT_EQ(dlrt_op_doc(dlrt_op_count()), nullptr);
}

// ---- memory and lifetime ----------------------------------------------------------------------

TEST_F(Eager, LogicalDeviceMemoryLimit) {
  const uint64_t limits[] = {1024, 0};
  dlrt_logical_device_config split{};
  split.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
  split.physical_device = "REF:0";
  split.count = 2;
  split.memory_limits = limits;
  ContextPtr ctx = make_context(nullptr, &split, 1);
  ASSERT_NE(ctx, nullptr);
  size_t limited = 0;
  StatusPtr s(dlrt_context_find_device(ctx.get(), "REF:0", &limited));
  ASSERT_EQ(s, nullptr) << text(s.get());
  const dlrt_tensor_desc d = desc(DLRT_F32, {200});  // 800 bytes
  dlrt_tensor* a = nullptr;
  s.reset(dlrt_tensor_create(ctx.get(), limited, &d, &a));
  ASSERT_EQ(s, nullptr) << text(s.get());
  TensorPtr ao(a);
  EXPECT_EQ(ctx->eager().bytes_in_use(limited), 800u);
  dlrt_tensor* b = nullptr;
  s.reset(dlrt_tensor_create(ctx.get(), limited, &d, &b));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_RESOURCE_EXHAUSTED) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "/device:REF:0") && contains(text(s.get()), "800 bytes") &&
              contains(text(s.get()), "limit 1024"))
      << text(s.get());
  EXPECT_EQ(b, nullptr);
  ao.reset();
  EXPECT_EQ(ctx->eager().bytes_in_use(limited), 0u);
  s.reset(dlrt_tensor_create(ctx.get(), limited, &d, &b));
  EXPECT_EQ(s, nullptr) << text(s.get());
  dlrt_tensor_destroy(b);
}

TEST_F(Eager, TensorsThenContextDestroyCleanly) {
  ContextPtr ctx = make_context();
  size_t cpu = 0;
  StatusPtr s(dlrt_context_find_device(ctx.get(), "CPU:0", &cpu));
  ASSERT_EQ(s, nullptr) << text(s.get());
  const dlrt_tensor_desc d = desc(DLRT_F32, {16});
  dlrt_tensor* x = nullptr;
  s.reset(dlrt_tensor_create(ctx.get(), cpu, &d, &x));
  ASSERT_EQ(s, nullptr) << text(s.get());
  const dlrt_tensor* in[] = {x};
  dlrt_tensor* out[1] = {nullptr};
  s.reset(dlrt_op_run(ctx.get(), "exp", cpu, in, 1, nullptr, 0, out, 1));
  ASSERT_EQ(s, nullptr) << text(s.get());
  dlrt_tensor_destroy(out[0]);
  dlrt_tensor_destroy(x);
  EXPECT_EQ(ctx->eager().live_tensors(), 0u);
  ctx.reset();  // kernels, workspaces and the stream go before the devices close
}

}  // namespace
