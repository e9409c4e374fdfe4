// ops_gpu_test.cc: every op of docs/ops.md on the CUDA device against the reference kernels on
// the same random inputs (label `gpu`; every test skips with the plugin's reason when there is
// no device). Descriptors come from the core's registry (dlrt::ops::instantiate), complete
// with defaults, exactly as the executor hands them over. Outputs are poisoned with NaN bytes
// before each run, so an element a kernel forgets to write fails the comparison.
//
// Tolerances (docs/ops.md): relative-to-scale max|out - ref| / max(1, max|ref|): 1e-5
// element-wise/copies/updates, 1e-4 reductions/softmax/losses, 1e-3 conv/matmul and their
// gradients; exact for argmax, equal_count, fill, cast and random ops. Two NaNs agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "op_view.hpp"
#include "ops/op_instance.hpp"
#include "reference_kernels.hpp"
#include "testing/fake_host.hpp"

namespace {

using dlrt::ops::AttrMap;
using dlrt::ops::Ints;
using dlrt::ops::TensorType;
using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

struct Case {
  std::string op;
  std::vector<TensorType> inputs;
  AttrMap attrs;
  double tol;  // 0: exact
};

TensorType f32(dlrt::ops::Dims d) { return {DLRT_F32, std::move(d)}; }
TensorType i32(dlrt::ops::Dims d) { return {DLRT_I32, std::move(d)}; }
TensorType i64(dlrt::ops::Dims d) { return {DLRT_I64, std::move(d)}; }

std::vector<Case> cases() {
  std::vector<Case> c;
  const double kConv = 1e-3, kRed = 1e-4, kEw = 1e-5;
  // conv2d and friends: batch 1, odd sizes, SAME (even and odd totals) / VALID, stride 2, both formats.
  struct Conv {
    Ints x, w;
    const char* padding;
    Ints strides, dil;
    const char* fmt;
  };
  for (const Conv& v : {Conv{{1, 28, 28, 1}, {3, 3, 1, 32}, "VALID", {1, 1}, {1, 1}, "NHWC"},
                        Conv{{2, 9, 7, 3}, {3, 3, 3, 5}, "SAME", {2, 2}, {1, 1}, "NHWC"},
                        Conv{{3, 8, 8, 4}, {2, 2, 4, 6}, "SAME", {1, 1}, {1, 1}, "NHWC"},
                        Conv{{2, 3, 11, 10}, {5, 3, 3, 4}, "SAME", {2, 1}, {1, 1}, "NCHW"},
                        Conv{{1, 2, 9, 9}, {3, 3, 2, 3}, "VALID", {1, 1}, {2, 2}, "NCHW"},
                        Conv{{2, 10, 10, 2}, {3, 3, 2, 4}, "SAME", {1, 1}, {2, 1}, "NHWC"}}) {
    AttrMap a = {{"padding", v.padding},
                 {"strides", v.strides},
                 {"dilations", v.dil},
                 {"data_format", v.fmt}};
    auto conv = dlrt::ops::instantiate("conv2d", {f32(v.x), f32(v.w)}, a);
    if (!conv.ok()) continue;
    const auto y = conv.value().output(0).dims;
    c.push_back({"conv2d", {f32(v.x), f32(v.w)}, a, kConv});
    for (const char* act : {"none", "relu", "sigmoid", "tanh"}) {
      AttrMap b = a;
      b["activation"] = act;
      c.push_back({"conv2d_bias_act", {f32(v.x), f32(v.w), f32({v.w[3]})}, b, kConv});
    }
    AttrMap d = a;
    d["input_shape"] = v.x;
    c.push_back({"conv2d_backward_data", {f32(y), f32(v.w)}, d, kConv});
    AttrMap f = a;
    f["filter_shape"] = v.w;
    c.push_back({"conv2d_backward_filter", {f32(v.x), f32(y)}, f, kConv});
  }
  struct Pool {
    Ints x, k, s;
    const char* padding;
    const char* fmt;
  };
  for (const Pool& p : {Pool{{2, 26, 26, 8}, {2, 2}, {2, 2}, "VALID", "NHWC"},
                        Pool{{1, 7, 9, 3}, {3, 3}, {2, 2}, "SAME", "NHWC"},
                        Pool{{2, 3, 8, 8}, {3, 3}, {1, 1}, "SAME", "NCHW"},
                        Pool{{1, 2, 6, 7}, {2, 2}, {2, 2}, "SAME", "NCHW"}}) {
    AttrMap a = {{"ksize", p.k}, {"strides", p.s}, {"padding", p.padding}, {"data_format", p.fmt}};
    auto fwd = dlrt::ops::instantiate("max_pool2d", {f32(p.x)}, a);
    if (!fwd.ok()) continue;
    const auto y = fwd.value().output(0).dims;
    c.push_back({"max_pool2d", {f32(p.x)}, a, kEw});
    c.push_back({"avg_pool2d", {f32(p.x)}, a, kEw});
    c.push_back({"max_pool2d_backward", {f32(p.x), f32(y)}, a, kEw});
    AttrMap b = a;
    b["input_shape"] = p.x;
    c.push_back({"avg_pool2d_backward", {f32(y)}, b, kEw});
  }
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t m = 5, k = 7, n = 3;
      Ints ad = ta ? Ints{k, m} : Ints{m, k}, bd = tb ? Ints{n, k} : Ints{k, n};
      AttrMap a = {{"transpose_a", ta}, {"transpose_b", tb}};
      c.push_back({"matmul", {f32(ad), f32(bd)}, a, kConv});
      for (const char* act : {"none", "relu", "sigmoid", "tanh"}) {
        AttrMap b = a;
        b["activation"] = act;
        c.push_back({"matmul_bias_act", {f32(ad), f32(bd), f32({n})}, b, kConv});
      }
    }
  c.push_back({"matmul", {f32({64, 1600}), f32({1600, 64})}, {}, kConv});
  c.push_back({"matmul", {f32({1, 1}), f32({1, 1})}, {}, kConv});
  // batch_matmul: one strided-batched call (equal batches, a rank-2 weight) and the per-matrix
  // loop of a mixed broadcast.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Ints ad = ta ? Ints{6, 7, 5} : Ints{6, 5, 7}, bd = tb ? Ints{6, 3, 7} : Ints{6, 7, 3};
      c.push_back({"batch_matmul", {f32(ad), f32(bd)}, {{"transpose_a", ta}, {"transpose_b", tb}},
                   kConv});
    }
  c.push_back({"batch_matmul", {f32({4, 9, 16}), f32({16, 8})}, {}, kConv});
  c.push_back({"batch_matmul", {f32({2, 1, 3, 4}), f32({1, 5, 4, 2})}, {}, kConv});
  c.push_back({"batch_matmul", {f32({8, 64, 32}), f32({8, 64, 32})}, {{"transpose_b", true}}, kConv});
  // lstm_cell (cuBLASLt GEMM with zx as C, then the gate kernel) and lstm_cell_grad: one
  // row, an odd H, and a batch of 64 with 4H = 512.
  for (const auto& [b, h] : {std::pair<int64_t, int64_t>{1, 1}, {3, 13}, {64, 128}}) {
    c.push_back({"lstm_cell", {f32({b, 4 * h}), f32({b, h}), f32({b, h}), f32({h, 4 * h})}, {},
                 kConv});
    c.push_back({"lstm_cell_grad",
                 {f32({b, h}), f32({b, h}), f32({b, h}), f32({b, h}), f32({b, 4 * h})}, {}, kEw});
  }
  for (const char* op : {"relu", "sigmoid", "tanh", "neg", "exp", "log", "sqrt", "copy"})
    c.push_back({op, {f32({3, 17, 5})}, {}, kEw});
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"})
    c.push_back({op, {f32({1031}), f32({1031})}, {}, kEw});
  for (const char* op : {"add", "sub", "mul", "div"}) {
    c.push_back({op, {f32({4, 5}), f32({4, 5})}, {}, kEw});
    c.push_back({op, {f32({2, 1, 3}), f32({4, 1})}, {}, kEw});
    c.push_back({op, {f32({}), f32({7, 3})}, {}, kEw});
  }
  c.push_back({"bias_add", {f32({2, 5, 5, 3}), f32({3})}, {}, kEw});
  c.push_back({"bias_add", {f32({2, 3, 4, 5}), f32({3})}, {{"data_format", "NCHW"}}, kEw});
  c.push_back({"bias_add_grad", {f32({64, 11, 11, 32})}, {}, kRed});
  c.push_back({"bias_add_grad", {f32({2, 3, 4, 5})}, {{"data_format", "NCHW"}}, kRed});
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"})
    for (const Ints& axes : {Ints{}, Ints{1}, Ints{0, 2}, Ints{-1}})
      c.push_back({op, {f32({6, 7, 300})}, {{"axes", axes}, {"keepdims", axes.size() == 1}}, kRed});
  c.push_back(
      {"reduce_max_grad", {f32({6, 7, 5}), f32({6, 5}), f32({6, 5})}, {{"axes", Ints{1}}}, kEw});
  c.push_back({"broadcast_to", {f32({3, 1})}, {{"shape", Ints{2, 3, 4}}}, kEw});
  c.push_back({"reshape", {f32({4, 6})}, {{"shape", Ints{3, -1}}}, kEw});
  c.push_back({"flatten", {f32({4, 3, 2, 5})}, {}, kEw});
  c.push_back({"transpose", {f32({2, 3, 4, 5})}, {{"perm", Ints{3, 1, 0, 2}}}, kEw});
  c.push_back({"transpose", {{DLRT_U8, {7, 9}}}, {{"perm", Ints{1, 0}}}, 0});
  for (const char* op : {"softmax", "log_softmax"}) {
    c.push_back({op, {f32({64, 10})}, {}, kRed});
    c.push_back({op, {f32({3, 1000})}, {}, kRed});
    c.push_back({op, {f32({4, 5, 6})}, {{"axis", int64_t{1}}}, kRed});
  }
  c.push_back({"sparse_softmax_cross_entropy", {f32({64, 10}), i32({64})}, {}, kRed});
  c.push_back({"sparse_softmax_cross_entropy", {f32({3, 1001}), i64({3})}, {}, kRed});
  c.push_back({"argmax", {f32({64, 10})}, {}, 0});
  c.push_back({"argmax", {f32({4, 5, 6})}, {{"axis", int64_t{1}}, {"output_type", DLRT_I64}}, 0});
  c.push_back({"equal_count", {i32({64}), i64({64})}, {}, 0});
  c.push_back({"fill", {}, {{"shape", Ints{3, 5}}, {"value", 2.5}}, 0});
  c.push_back({"fill", {}, {{"shape", Ints{7}}, {"value", -3.7}, {"dtype", DLRT_I32}}, 0});
  c.push_back({"random_uniform",
               {},
               {{"shape", Ints{1031}}, {"minval", -2.0}, {"maxval", 3.0}, {"seed", int64_t{42}}},
               0});
  c.push_back(
      {"random_normal", {}, {{"shape", Ints{33, 31}}, {"stddev", 0.5}, {"seed", int64_t{-7}}}, 0});
  c.push_back({"dropout", {f32({1031})}, {{"rate", 0.25}, {"seed", int64_t{9}}}, 0});
  c.push_back({"cast", {f32({100})}, {{"dtype", DLRT_I32}}, 0});
  c.push_back({"cast", {{DLRT_U8, {100}}}, {{"dtype", DLRT_F32}}, 0});
  c.push_back({"cast", {i64({100})}, {{"dtype", DLRT_I8}}, 0});
  c.push_back({"gather_rows", {f32({10, 3, 4}), i32({7})}, {}, kEw});
  c.push_back({"gather_rows", {{DLRT_U8, {10, 5}}, i64({6})}, {}, 0});
  c.push_back({"gather", {f32({10, 3, 4}), i32({4, 7})}, {}, 0});  // ids in [0, 3): repeats
  c.push_back({"gather", {{DLRT_U8, {10, 5}}, i64({6})}, {}, 0});
  c.push_back({"scatter_add", {i32({8, 40}), f32({8, 40, 33})}, {{"num_rows", int64_t{5}}}, kRed});
  c.push_back({"scatter_add", {i64({300}), f32({300, 2})}, {{"num_rows", int64_t{3}}}, kRed});
  // one_hot: ids in [0, 3), so depth 2 has out-of-range ids (all-off rows).
  c.push_back({"one_hot", {i32({4, 7})}, {{"depth", int64_t{5}}}, 0});
  c.push_back({"one_hot",
               {i64({300})},
               {{"depth", int64_t{2}}, {"on_value", 2.5}, {"off_value", -1.0}},
               0});
  c.push_back({"one_hot", {i32({33})}, {{"depth", int64_t{3}}, {"dtype", DLRT_I64}}, 0});
  c.push_back({"cumsum", {f32({3, 5, 7})}, {{"axis", int64_t{1}}}, kRed});
  c.push_back({"cumsum", {f32({64, 300})}, {{"axis", int64_t{-1}}, {"exclusive", true}}, kRed});
  c.push_back({"cumsum", {f32({5000})}, {{"reverse", true}}, kRed});
  c.push_back({"top_k", {f32({64, 10})}, {{"k", int64_t{3}}}, 0});
  c.push_back({"top_k", {f32({8, 5000})}, {{"k", int64_t{50}}}, 0});
  c.push_back({"top_k", {f32({3, 4, 11})}, {{"k", int64_t{11}}, {"sorted", false}}, 0});
  // multinomial: the same ids as the reference (Philox draws, the double CDF walked in id order).
  c.push_back({"multinomial", {f32({64, 256})}, {{"num_samples", int64_t{4}}, {"seed", int64_t{5}}}, 0});
  c.push_back({"multinomial", {f32({3, 5000})}, {{"num_samples", int64_t{33}}, {"seed", int64_t{-1}}}, 0});
  c.push_back(
      {"cumsum", {f32({40, 3, 9})}, {{"axis", int64_t{0}}, {"exclusive", true}, {"reverse", true}}, kRed});
  // attention: rank 3 and 4, causal (square, Tq < Tk, Tq = 1 against a cache), D != Dv, a
  // scale, lengths past the 128-key chunks; causal_mask with -inf and a finite fill.
  c.push_back({"causal_mask", {f32({2, 3, 4, 7})}, {}, 0});
  c.push_back({"causal_mask", {f32({5, 5})}, {{"fill", 0.0}}, 0});
  struct Attn {
    dlrt::ops::Dims batch;
    int64_t tq, tk, d, dv, causal;
    double scale;
  };
  for (const Attn& a : {Attn{{2, 3}, 5, 5, 4, 4, 0, 0.0}, Attn{{3}, 4, 7, 8, 8, 1, 0.0},
                        Attn{{2, 2}, 1, 300, 32, 32, 1, 0.0}, Attn{{2}, 6, 6, 8, 3, 0, 0.5},
                        Attn{{1, 2}, 130, 200, 32, 16, 1, 0.0}}) {
    auto dims = [&](std::initializer_list<int64_t> tail) {
      dlrt::ops::Dims d = a.batch;
      d.insert(d.end(), tail);
      return d;
    };
    const AttrMap attrs = {{"causal", a.causal}, {"scale", a.scale}};
    c.push_back({"attention", {f32(dims({a.tq, a.d})), f32(dims({a.tk, a.d})),
                               f32(dims({a.tk, a.dv}))}, attrs, kConv});
    c.push_back({"attention_grad",
                 {f32(dims({a.tq, a.dv})), f32(dims({a.tq, a.d})), f32(dims({a.tk, a.d})),
                  f32(dims({a.tk, a.dv})), f32(dims({a.tq, a.dv})), f32(dims({a.tq}))},
                 attrs, kConv});
  }
  // The updates' last input is the learning rate (version 2), 0.01 (make_input).
  c.push_back({"sgd_update",
               {f32({300}), f32({300}), f32({300}), f32({})},
               {{"momentum", 0.9}, {"nesterov", true}},
               kEw});
  c.push_back({"sgd_update", {f32({300}), f32({300}), f32({300}), f32({})}, {}, kEw});
  c.push_back(
      {"adam_update", {f32({300}), f32({300}), f32({300}), f32({300}), f32({}), f32({})}, {}, kEw});
  return c;
}

// Random bytes for one input: floats in [-2, 2] (|x| for adam's v, 3 for its step, 0.01 for the
// updates' learning rate), indices in
// [0, 3) (every op's index operands have at least 3 rows/classes here), u8 any.
std::vector<uint8_t> make_input(const Case& c, size_t i, const TensorType& t, std::mt19937& gen) {
  const int64_t n = t.num_elements();
  std::vector<uint8_t> b(size_t(n) * dlrt::plugin::dtype_size(t.dtype));
  std::uniform_real_distribution<float> real(-2.f, 2.f);
  for (int64_t k = 0; k < n; ++k) {
    switch (t.dtype) {
      case DLRT_F32: {
        float v = real(gen);
        if (c.op == "adam_update" && i == 3) v = std::fabs(v);
        if (c.op == "adam_update" && i == 4) v = 3.f;
        if ((c.op == "adam_update" && i == 5) || (c.op == "sgd_update" && i == 3)) v = 0.01f;
        reinterpret_cast<float*>(b.data())[k] = v;
        break;
      }
      case DLRT_I32:
        reinterpret_cast<int32_t*>(b.data())[k] = int32_t(gen() % 3);
        break;
      case DLRT_I64:
        reinterpret_cast<int64_t*>(b.data())[k] = int64_t(gen() % 3);
        break;
      default:
        b[size_t(k)] = uint8_t(gen());
        break;
    }
  }
  return b;
}

class CudaOps : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    plugin_ = std::make_unique<LoadedPlugin>(DLRT_CUDA_PLUGIN_PATH);
    ASSERT_TRUE(plugin_->ok()) << plugin_->error();
    inst_ = plugin_->create();
    ASSERT_NE(inst_, nullptr) << plugin_->error();
    int32_t count = 0;
    auto [code, msg] = take_status(api().device_count(inst_, &count));
    if (code != DLRT_OK) GTEST_SKIP() << msg;
    ASSERT_EQ(take_status(api().device_open(inst_, 0, &dev_)).first, DLRT_OK);
    ASSERT_EQ(take_status(api().stream_create(dev_, &stream_)).first, DLRT_OK);
  }
  void TearDown() override {
    for (void* p : buffers_) api().mem_free(dev_, p);
    if (stream_ != nullptr) api().stream_destroy(stream_);
    if (dev_ != nullptr) api().device_close(dev_);
    plugin_.reset();
  }
  const dlrt_plugin_api& api() const { return plugin_->api(); }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(take_status(api().mem_alloc(dev_, bytes == 0 ? 1 : bytes, 256, &p)).first, DLRT_OK);
    buffers_.push_back(p);
    return p;
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  dlrt_plugin* inst_ = nullptr;
  dlrt_device* dev_ = nullptr;
  dlrt_stream* stream_ = nullptr;
  std::vector<void*> buffers_;
};

TEST_P(CudaOps, MatchesReference) {
  const Case c = cases()[GetParam()];
  auto made = dlrt::ops::instantiate(c.op, c.inputs, c.attrs);
  ASSERT_TRUE(made.ok()) << c.op << ": " << made.status().to_string();
  const dlrt::ops::OpInstance& inst = made.value();
  const dlrt_op_desc& desc = inst.desc();
  SCOPED_TRACE(c.op + " " + std::to_string(GetParam()));

  dlrt_op_cost cost{};
  cost.struct_size = sizeof cost;
  auto [code, msg] = take_status(api().op_supported(inst_, 0, &desc, &cost));
  ASSERT_EQ(code, DLRT_OK) << msg;
  EXPECT_GT(cost.estimated_us, 0.0);
  dlrt_kernel* kernel = nullptr;
  size_t ws_bytes = 0;
  auto [kcode, kmsg] = take_status(api().kernel_create(dev_, &desc, &kernel, &ws_bytes));
  ASSERT_EQ(kcode, DLRT_OK) << kmsg;

  std::mt19937 gen(1234 + unsigned(GetParam()));
  std::vector<std::vector<uint8_t>> host_in;
  std::vector<const void*> host_in_ptrs, dev_in;
  for (size_t i = 0; i < inst.inputs().size(); ++i) {
    host_in.push_back(make_input(c, i, inst.inputs()[i], gen));
    void* d = alloc(host_in.back().size());
    ASSERT_EQ(take_status(
                  api().memcpy_h2d(dev_, d, host_in.back().data(), host_in.back().size(), nullptr))
                  .first,
              DLRT_OK);
    dev_in.push_back(d);
  }
  for (auto& h : host_in) host_in_ptrs.push_back(h.data());
  std::vector<std::vector<uint8_t>> ref_out, got_out;
  std::vector<void*> ref_ptrs, dev_out;
  for (const TensorType& t : inst.outputs()) {
    const size_t bytes = size_t(t.num_elements()) * dlrt::plugin::dtype_size(t.dtype);
    ref_out.emplace_back(bytes);
    got_out.emplace_back(bytes);
    void* d = alloc(bytes);
    ASSERT_EQ(take_status(api().memset(dev_, d, 0xFF, bytes, nullptr)).first,
              DLRT_OK);  // NaN poison
    dev_out.push_back(d);
  }
  for (auto& r : ref_out) ref_ptrs.push_back(r.data());
  void* ws = ws_bytes > 0 ? alloc(ws_bytes) : nullptr;

  const uint64_t rng_offset = 5;
  dlrt_kernel_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = dev_in.size();
  args.inputs = dev_in.data();
  args.num_outputs = dev_out.size();
  args.outputs = dev_out.data();
  args.workspace = ws;
  args.workspace_bytes = ws_bytes;
  args.rng_offset = rng_offset;
  for (int rep = 0; rep < 2; ++rep) {  // twice: run() must be repeatable (no state consumed)
    auto [rcode, rmsg] = take_status(api().kernel_run(kernel, stream_, &args));
    ASSERT_EQ(rcode, DLRT_OK) << rmsg;
  }
  auto [scode, smsg] = take_status(api().stream_synchronize(stream_));
  ASSERT_EQ(scode, DLRT_OK) << smsg;
  api().kernel_destroy(kernel);

  dlrt::plugin::OpView view(&desc);
  dlrt::reference::run(view, host_in_ptrs.data(), ref_ptrs.data(), rng_offset);
  // Optimizer updates run twice in place on the GPU only if aliased; here they are not, so
  // one reference run matches.
  for (size_t o = 0; o < dev_out.size(); ++o) {
    ASSERT_EQ(take_status(
                  api().memcpy_d2h(dev_, got_out[o].data(), dev_out[o], got_out[o].size(), nullptr))
                  .first,
              DLRT_OK);
    const TensorType& t = inst.outputs()[o];
    if (t.dtype != DLRT_F32) {
      EXPECT_EQ(got_out[o], ref_out[o]) << "output " << o << " differs (exact dtype)";
      continue;
    }
    const float* got = reinterpret_cast<const float*>(got_out[o].data());
    const float* ref = reinterpret_cast<const float*>(ref_out[o].data());
    const size_t n = got_out[o].size() / 4;
    double scale = 1.0, err = 0.0;
    size_t worst = 0;
    for (size_t k = 0; k < n; ++k)
      if (std::isfinite(ref[k])) scale = std::max(scale, double(std::fabs(ref[k])));
    for (size_t k = 0; k < n; ++k) {
      if (std::isnan(ref[k]) && std::isnan(got[k])) continue;
      double e = std::isnan(got[k]) || std::isnan(ref[k]) ? INFINITY
                 : ref[k] == got[k]                       ? 0.0
                                    : std::fabs(double(got[k]) - double(ref[k]));
      if (e > err) err = e, worst = k;
    }
    EXPECT_LE(err / scale, c.tol) << "output " << o << ": worst element " << worst << " got "
                                  << got[worst] << " want " << ref[worst];
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaOps, ::testing::Range(size_t{0}, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return cases()[info.param].op + "_" + std::to_string(info.param);
                         });

}  // namespace
