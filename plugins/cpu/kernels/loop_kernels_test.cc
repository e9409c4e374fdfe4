// loop_kernels_test.cc: the cpu plugin's loop kernels (kernels/loop_*.cc) against the reference
// kernels, through the plugin's C table as the host drives it: op_supported, kernel_create,
// kernel_run on device memory. Descriptors come from core/ops' instantiate (defaults filled,
// outputs inferred); inputs are random, outputs are poisoned with NaN bytes first, and results
// are compared with dlrt::reference::run under docs/ops.md's tolerances (random ops, cast,
// fill, argmax and equal_count exactly). Shapes cover scalars, size 1, odd sizes, broadcasting
// both ways and sizes large enough to run on several threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "narrow_float.hpp"
#include "ops/op_instance.hpp"
#include "ops/status_matchers.hpp"
#include "reference_kernels.hpp"
#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

namespace {

using dlrt::ops::AttrMap;
using dlrt::ops::Dims;
using dlrt::ops::OpInstance;
using dlrt::ops::TensorType;
using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Bytes = std::vector<unsigned char>;

using dlrt::testing::contains;

// One plugin instance, its device and a stream, shared by the tests of one `threads` option.
struct Cpu {
  explicit Cpu(const std::map<std::string, std::string>& options) : lib(DLRT_PLUGIN_FILE) {
    if (!lib.ok()) return;
    inst = lib.create(options);
    if (inst == nullptr) return;
    if (take_status(api().device_open(inst, 0, &dev)).first != DLRT_OK) return;
    take_status(api().stream_create(dev, &stream));
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  bool ok() const { return stream != nullptr; }

  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  dlrt_device* dev = nullptr;
  dlrt_stream* stream = nullptr;
};

Cpu& cpu() {
  static Cpu* c = new Cpu(
      std::map<std::string, std::string>{});  // every core; leaked: the plugin outlives the tests
  return *c;
}
Cpu& cpu1() {
  static Cpu* c = new Cpu(std::map<std::string, std::string>{{"threads", "1"}});
  return *c;
}

// ---- descriptors -------------------------------------------------------------------------

// A descriptor copied from an OpInstance with every f32 operand turned into `dtype` (the
// registry takes f32/f16/bf16 floats; the kernels also run f64). Attributes point into `inst`.
struct RetypedDesc {
  RetypedDesc(const OpInstance& inst, int32_t dtype) : d(inst.desc()) {
    for (size_t i = 0; i < d.num_inputs; ++i) in.push_back(*d.inputs[i]);
    for (size_t i = 0; i < d.num_outputs; ++i) out.push_back(*d.outputs[i]);
    for (auto* list : {&in, &out})
      for (auto& t : *list)
        if (t.dtype == DLRT_F32) t.dtype = dtype;
    for (auto& t : in) in_ptrs.push_back(&t);
    for (auto& t : out) out_ptrs.push_back(&t);
    d.inputs = in_ptrs.data();
    d.outputs = out_ptrs.data();
  }
  dlrt_op_desc d;
  std::vector<dlrt_tensor_desc> in, out;
  std::vector<const dlrt_tensor_desc*> in_ptrs, out_ptrs;
};

OpInstance instance(const std::string& op, const std::vector<TensorType>& inputs,
                    const AttrMap& attrs) {
  return dlrt::ops::testing::value_or_throw(dlrt::ops::instantiate(op, inputs, attrs));
}

size_t bytes_of(const dlrt_tensor_desc& t) {
  size_t n = dlrt::plugin::dtype_size(t.dtype);
  for (int i = 0; i < t.rank; ++i) n *= static_cast<size_t>(t.dims[i]);
  return n;
}
int64_t numel_of(const dlrt_tensor_desc& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

// ---- random inputs -----------------------------------------------------------------------

struct Range {
  double lo = -2, hi = 2;
};

Bytes random_tensor(const dlrt_tensor_desc& t, Range r, std::mt19937_64& rng) {
  const int64_t n = numel_of(t);
  Bytes b(bytes_of(t));
  std::uniform_real_distribution<double> real(r.lo, r.hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(r.lo),
                                                 static_cast<int64_t>(r.hi));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DLRT_F32:
        reinterpret_cast<float*>(b.data())[i] = static_cast<float>(real(rng));
        break;
      case DLRT_F64:
        reinterpret_cast<double*>(b.data())[i] = real(rng);
        break;
      case DLRT_I32:
        reinterpret_cast<int32_t*>(b.data())[i] = static_cast<int32_t>(integer(rng));
        break;
      case DLRT_I64:
        reinterpret_cast<int64_t*>(b.data())[i] = integer(rng);
        break;
      case DLRT_U8:
        b[i] = static_cast<uint8_t>(integer(rng));
        break;
      case DLRT_I8:
        reinterpret_cast<int8_t*>(b.data())[i] = static_cast<int8_t>(integer(rng));
        break;
      case DLRT_BOOL:
        b[i] = static_cast<uint8_t>(integer(rng) != 0);
        break;
      default: {  // f16/bf16 (shape ops only move them), i16, u16, u32, u64: random bit
                  // patterns, every value of the integers (u64's top half too)
        const size_t es = dlrt_dtype_size(t.dtype);
        for (size_t k = 0; k < es; ++k) b[es * i + k] = static_cast<uint8_t>(rng());
      }
    }
  }
  return b;
}

// ---- running -----------------------------------------------------------------------------

// Runs `d` on the plugin. Inputs are copied to device memory, outputs poisoned with 0xFF (NaN
// for floats). `alias[o] = i` makes output o use input i's buffer (in-place updates).
std::vector<Bytes> run_plugin(Cpu& c, const dlrt_op_desc& d, const std::vector<Bytes>& inputs,
                              uint64_t rng_offset, const std::map<size_t, size_t>& alias = {}) {
  const dlrt_plugin_api& api = c.api();
  dlrt_kernel* k = nullptr;
  size_t ws = 0;
  auto [code, msg] = take_status(api.kernel_create(c.dev, &d, &k, &ws));
  EXPECT_EQ(code, DLRT_OK) << d.op << ": kernel_create: " << msg;
  if (code != DLRT_OK) return {};
  auto alloc = [&](size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(take_status(api.mem_alloc(c.dev, std::max<size_t>(bytes, 1), 64, &p)).first, DLRT_OK);
    return p;
  };
  std::vector<void*> in(d.num_inputs), out(d.num_outputs);
  for (size_t i = 0; i < d.num_inputs; ++i) {
    in[i] = alloc(inputs[i].size());
    if (!inputs[i].empty())
      take_status(api.memcpy_h2d(c.dev, in[i], inputs[i].data(), inputs[i].size(), nullptr));
  }
  std::vector<bool> owned(d.num_outputs, true);
  for (size_t o = 0; o < d.num_outputs; ++o) {
    auto it = alias.find(o);
    if (it != alias.end()) {
      out[o] = in[it->second];
      owned[o] = false;
    } else {
      out[o] = alloc(bytes_of(*d.outputs[o]));
      take_status(api.memset(c.dev, out[o], 0xFF, bytes_of(*d.outputs[o]), nullptr));
    }
  }
  void* workspace = ws > 0 ? alloc(ws) : nullptr;
  dlrt_kernel_args args{sizeof(dlrt_kernel_args),
                        in.size(),
                        in.data(),
                        out.size(),
                        out.data(),
                        workspace,
                        ws,
                        rng_offset};
  auto [rc, rmsg] = take_status(api.kernel_run(k, c.stream, &args));
  EXPECT_EQ(rc, DLRT_OK) << d.op << ": kernel_run: " << rmsg;
  take_status(api.stream_synchronize(c.stream));
  std::vector<Bytes> result(d.num_outputs);
  for (size_t o = 0; o < d.num_outputs; ++o) {
    result[o].resize(bytes_of(*d.outputs[o]));
    take_status(api.memcpy_d2h(c.dev, result[o].data(), out[o], result[o].size(), nullptr));
  }
  api.kernel_destroy(k);
  for (void* p : in) api.mem_free(c.dev, p);
  for (size_t o = 0; o < d.num_outputs; ++o)
    if (owned[o]) api.mem_free(c.dev, out[o]);
  if (workspace != nullptr) api.mem_free(c.dev, workspace);
  return result;
}

std::vector<Bytes> run_reference(const dlrt_op_desc& d, const std::vector<Bytes>& inputs,
                                 uint64_t rng_offset) {
  dlrt::plugin::OpView op(&d);
  dlrt::reference::check_supported(op);
  std::vector<const void*> in;
  for (const Bytes& b : inputs) in.push_back(b.data());
  std::vector<Bytes> out(d.num_outputs);
  std::vector<void*> out_ptrs;
  for (size_t o = 0; o < d.num_outputs; ++o) {
    out[o].assign(bytes_of(*d.outputs[o]), 0xFF);
    out_ptrs.push_back(out[o].data());
  }
  dlrt::reference::run(op, in.data(), out_ptrs.data(), rng_offset);
  return out;
}

// Relative-to-scale error max|out - ref| / max(1, max|ref|) of a float output; NaN and inf
// must sit where the reference has them. Other dtypes: exact bytes.
void expect_close(const dlrt_tensor_desc& t, const Bytes& out, const Bytes& ref, double tol,
                  const std::string& what) {
  ASSERT_EQ(out.size(), ref.size()) << what;
  if (t.dtype != DLRT_F32 && t.dtype != DLRT_F64) {
    if (out != ref) {
      size_t i = 0;
      while (out[i] == ref[i]) ++i;
      ADD_FAILURE() << what << ": bytes differ first at byte " << i;
    }
    return;
  }
  const int64_t n = numel_of(t);
  auto at = [&](const Bytes& b, int64_t i) {
    return t.dtype == DLRT_F32 ? double(reinterpret_cast<const float*>(b.data())[i])
                               : reinterpret_cast<const double*>(b.data())[i];
  };
  double scale = 1, err = 0;
  int64_t worst = -1;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(at(ref, i))) scale = std::max(scale, std::fabs(at(ref, i)));
  for (int64_t i = 0; i < n; ++i) {
    const double o = at(out, i), r = at(ref, i);
    if (std::isnan(r) || std::isinf(r)) {
      if (!(std::isnan(r) ? std::isnan(o) : o == r)) {
        ADD_FAILURE() << what << ": element " << i << " is " << o << ", reference " << r;
        return;
      }
      continue;
    }
    const double e = std::isnan(o) ? INFINITY : std::fabs(o - r);
    if (e > err) err = e, worst = i;
  }
  if (tol == 0) {
    EXPECT_EQ(err, 0.0) << what << ": element " << worst << " is " << at(out, worst)
                        << ", reference " << at(ref, worst) << " (exact expected)";
  } else {
    EXPECT_LE(err / scale, tol) << what << ": element " << worst << " is " << at(out, worst)
                                << ", reference " << at(ref, worst);
  }
}

struct Case {
  std::string op;
  std::vector<TensorType> inputs;
  AttrMap attrs;
  double tol = 1e-5;
  std::vector<Range> ranges;  // per input; default [-2, 2]
  uint64_t rng_offset = 0;
  std::vector<int32_t> dtypes = {DLRT_F32};  // float dtypes to run (f32 operands retyped)
};

std::string describe(const Case& c, int32_t dtype) {
  std::string s = c.op + "[" + dlrt::plugin::dtype_name(dtype) + "](";
  for (size_t i = 0; i < c.inputs.size(); ++i)
    s += (i ? ", " : "") + dlrt::ops::to_string(c.inputs[i]);
  return s + ")";
}

// Runs one case on `c` (and on the threads=1 plugin) and compares with the reference.
void check(const Case& k, Cpu& c = cpu()) {
  ASSERT_TRUE(c.ok());
  OpInstance inst = instance(k.op, k.inputs, k.attrs);
  for (int32_t dtype : k.dtypes) {
    RetypedDesc rd(inst, dtype);
    const dlrt_op_desc& d = rd.d;
    const std::string what = describe(k, dtype);
    dlrt_op_cost cost{};
    cost.struct_size = sizeof(cost);
    auto [code, msg] = take_status(c.api().op_supported(c.inst, 0, &d, &cost));
    ASSERT_EQ(code, DLRT_OK) << what << ": " << msg;
    EXPECT_GT(cost.bytes, 0) << what;
    std::mt19937_64 rng(std::hash<std::string>()(what));
    std::vector<Bytes> inputs;
    for (size_t i = 0; i < d.num_inputs; ++i)
      inputs.push_back(
          random_tensor(*d.inputs[i], i < k.ranges.size() ? k.ranges[i] : Range{}, rng));
    const std::vector<Bytes> ref = run_reference(d, inputs, k.rng_offset);
    const std::vector<Bytes> out = run_plugin(c, d, inputs, k.rng_offset);
    ASSERT_EQ(out.size(), ref.size()) << what;
    for (size_t o = 0; o < out.size(); ++o)
      expect_close(*d.outputs[o], out[o], ref[o], k.tol, what + " output " + std::to_string(o));
  }
}

const double kElementwise = 1e-5, kReduction = 1e-4, kExact = 0;
const std::vector<int32_t> kBoth = {DLRT_F32, DLRT_F64};

TensorType f32(Dims d) { return {DLRT_F32, std::move(d)}; }
TensorType of(dlrt_dtype t, Dims d) { return {t, std::move(d)}; }

// ---- element-wise ------------------------------------------------------------------------

TEST(LoopKernels, BinaryEqualShapes) {
  for (const char* op : {"add", "sub", "mul", "div"})
    for (Dims d : {Dims{}, Dims{1}, Dims{7}, Dims{3, 5}, Dims{2, 3, 4, 5}, Dims{300001}})
      check({op, {f32(d), f32(d)}, {}, kElementwise, {}, 0, kBoth});
}

TEST(LoopKernels, BinaryBroadcasting) {
  const std::vector<std::pair<Dims, Dims>> shapes = {
      {{5, 7}, {7}},     // trailing vector
      {{7}, {5, 7}},     // the other way round
      {{4, 3}, {}},      // scalar
      {{}, {4, 3}},      //
      {{1}, {9}},        // size 1 stretches
      {{5, 1}, {1, 6}},  // both stretch
      {{2, 3, 1, 5}, {3, 4, 1}},
      {{6, 1, 3}, {6, 4, 3}},  // middle dim
      {{1000, 129}, {129}},    // large enough to go parallel
      {{129, 1}, {129, 1000}},
      {{3, 100000}, {3, 1}},
  };
  for (const char* op : {"add", "sub", "mul", "div"})
    for (const auto& [a, b] : shapes) check({op, {f32(a), f32(b)}, {}, kElementwise, {}, 0, kBoth});
}

TEST(LoopKernels, Unary) {
  for (Dims d : {Dims{}, Dims{1}, Dims{13}, Dims{4, 5, 6}, Dims{200003}}) {
    check({"neg", {f32(d)}, {}, kElementwise, {}, 0, kBoth});
    check({"exp", {f32(d)}, {}, kElementwise, {{-5, 5}}, 0, kBoth});
    // log/sqrt of negatives give NaN, of 0 -inf/0: the range includes them.
    check({"log", {f32(d)}, {}, kElementwise, {{-0.5, 8}}, 0, kBoth});
    check({"sqrt", {f32(d)}, {}, kElementwise, {{-0.5, 8}}, 0, kBoth});
  }
}

// The unary maths (core/ops/infer_math.cc), each over a range that crosses its domain's edge
// where it has one (NaN outside), f32 and f64.
TEST(LoopKernels, UnaryMaths) {
  struct Case {
    const char* op;
    double lo, hi;
  };
  for (const Case& k : {Case{"sin", -7, 7}, {"cos", -7, 7}, {"tan", -1.5, 1.5}, {"asin", -1.2, 1.2},
                        {"acos", -1.2, 1.2}, {"atan", -9, 9}, {"sinh", -6, 6}, {"cosh", -6, 6},
                        {"asinh", -9, 9}, {"acosh", 0.5, 9}, {"atanh", -1.2, 1.2}, {"erf", -4, 4},
                        {"ceil", -5, 5}, {"floor", -5, 5}, {"round", -5, 5}, {"sign", -2, 2}})
    for (Dims d : {Dims{}, Dims{13}, Dims{200003}})
      check({k.op, {f32(d)}, {}, kElementwise, {{k.lo, k.hi}}, 0, kBoth});
}

TEST(LoopKernels, BiasAddGrad) {
  // Channel counts that take every block size of the f32 row sums (8, 4, 2, 1 vectors, single
  // channels) on both paths: 61 = 32 + 16 + 8 + 4 + 1 with 4 double lanes.
  for (Dims d : {Dims{1}, Dims{7}, Dims{5, 3}, Dims{64, 26, 26, 32}, Dims{3, 1, 1, 10},
                 Dims{100000, 3}, Dims{64, 11, 11, 64}, Dims{2000, 61}, Dims{300, 18}})
    check({"bias_add_grad", {f32(d)}, {{"data_format", "NHWC"}}, kReduction, {}, 0, kBoth});
  for (Dims d : {Dims{2, 3}, Dims{4, 5, 6, 7}, Dims{64, 32, 26, 26}, Dims{1, 1, 1}})
    check({"bias_add_grad", {f32(d)}, {{"data_format", "NCHW"}}, kReduction, {}, 0, kBoth});
}

// batch_norm_relu_grad and batch_norm_grad (loop_batch_norm.cc): NHWC with the compiled widths 16, 32 and 64 and
// others (13, 24 as (N,C)), sizes that run on several threads (per-thread partial sums), NCHW
// and f64 (the per-channel loop). Ranges as batch_norm_train saves its statistics; the bias
// range makes the ReLU cut part of every channel. And the forward pass it belongs to,
// batch_norm_train with activation relu (oneDNN's fuse_norm_relu, prim_norm.cc), at the same
// sizes.
TEST(LoopKernels, BatchNormGradsAndFusedForward) {
  const std::vector<Range> grad_ranges = {{-1, 1}, {-2, 2}, {0.5, 1.5}, {-1, 1}, {-0.5, 0.5},
                                          {0.5, 2}};
  for (Dims d : {Dims{4, 32, 32, 16}, Dims{8, 14, 14, 32}, Dims{16, 7, 7, 64}, Dims{3, 5, 7, 13},
                 Dims{64, 28, 28, 16}}) {
    const Dims c{d.back()};
    check({"batch_norm_relu_grad", {f32(d), f32(d), f32(c), f32(c), f32(c), f32(c)},
           {{"data_format", "NHWC"}}, kReduction, grad_ranges, 0, kBoth});
    check({"batch_norm_train", {f32(d), f32(c), f32(c), f32(c), f32(c)},
           {{"activation", "relu"}}, kReduction, {{-2, 2}, {0.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}}});
    check({"batch_norm_grad", {f32(d), f32(d), f32(c), f32(c), f32(c)}, {{"data_format", "NHWC"}},
           kReduction, {{-1, 1}, {-2, 2}, {0.5, 1.5}, {-0.5, 0.5}, {0.5, 2}}, 0, kBoth});
  }
  check({"batch_norm_relu_grad", {f32({200, 24}), f32({200, 24}), f32({24}), f32({24}),
                                  f32({24}), f32({24})},
         {}, kReduction, grad_ranges, 0, kBoth});
  check({"batch_norm_relu_grad", {f32({4, 16, 9, 9}), f32({4, 16, 9, 9}), f32({16}), f32({16}),
                                  f32({16}), f32({16})},
         {{"data_format", "NCHW"}}, kReduction, grad_ranges, 0, kBoth});
  check({"batch_norm_grad", {f32({4, 16, 9, 9}), f32({4, 16, 9, 9}), f32({16}), f32({16}),
                             f32({16})},
         {{"data_format", "NCHW"}}, kReduction, {{-1, 1}, {-2, 2}, {0.5, 1.5}, {-0.5, 0.5}, {0.5, 2}},
         0, kBoth});
}

// The training forms (loop_batch_norm_train.cc) and the residual tail's backward
// (loop_batch_norm.cc): batch_norm_train (activation none and relu), batch_norm_add_relu_train
// and batch_norm_add_relu_grad at the compiled widths and others, sizes that split across
// threads, NCHW and (N,C), f32 and f64, on both builds. x is offset by 3 in one case
// (|mean| >> std: the pivoted sums of squares must not cancel).
TEST(LoopKernels, BatchNormTrainAndAddRelu) {
  const std::vector<Range> fwd = {{-2, 2}, {-1, 1}, {0.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}};
  const std::vector<Range> bwd = {{-1, 1}, {-1, 1}, {-2, 2}, {0.5, 1.5}, {-0.5, 0.5}, {0.5, 2}};
  for (Dims d : {Dims{4, 32, 32, 16}, Dims{8, 14, 14, 32}, Dims{16, 7, 7, 64}, Dims{3, 5, 7, 13},
                 Dims{64, 28, 28, 16}, Dims{200, 24}}) {
    const Dims c{d.back()};
    check({"batch_norm_add_relu_train", {f32(d), f32(d), f32(c), f32(c), f32(c), f32(c)}, {},
           kReduction, fwd, 0, kBoth});
    check({"batch_norm_add_relu_grad", {f32(d), f32(d), f32(d), f32(c), f32(c), f32(c)}, {},
           kReduction, bwd, 0, kBoth});
    for (const char* act : {"none", "relu"})
      check({"batch_norm_train", {f32(d), f32(c), f32(c), f32(c), f32(c)}, {{"activation", act}},
             kReduction, {{-2, 2}, {0.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}}, 0, kBoth});
  }
  check({"batch_norm_train", {f32({64, 28, 28, 16}), f32({16}), f32({16}), f32({16}), f32({16})},
         {}, kReduction, {{2.5, 3.5}, {0.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}}, 0, kBoth});
  check({"batch_norm_train", {f32({4, 16, 9, 9}), f32({16}), f32({16}), f32({16}), f32({16})},
         {{"data_format", "NCHW"}, {"activation", "relu"}}, kReduction,
         {{-2, 2}, {0.5, 1.5}, {-1, 1}, {-1, 1}, {0.5, 2}}, 0, kBoth});
  std::vector<Range> offset = fwd;
  offset[0] = {2.5, 3.5};
  check({"batch_norm_add_relu_train", {f32({64, 28, 28, 16}), f32({64, 28, 28, 16}), f32({16}),
                                       f32({16}), f32({16}), f32({16})},
         {}, kReduction, offset, 0, kBoth});
  const Dims n{4, 16, 9, 9}, c{16};
  check({"batch_norm_add_relu_train", {f32(n), f32(n), f32(c), f32(c), f32(c), f32(c)},
         {{"data_format", "NCHW"}}, kReduction, fwd, 0, kBoth});
  check({"batch_norm_add_relu_grad", {f32(n), f32(n), f32(n), f32(c), f32(c), f32(c)},
         {{"data_format", "NCHW"}}, kReduction, bwd, 0, kBoth});
}

// max_pool2d_backward_relu_bias (loop_pool.cc): the fused 2x2 sweep (C a multiple of the
// lanes, odd tails, odd H/W, sizes that split across threads) and the other geometries' two
// passes (3x3/2 SAME, NCHW), against the reference; x signed, so whole windows are cut.
TEST(LoopKernels, MaxPoolBackwardReluBias) {
  for (Dims x : {Dims{64, 26, 26, 32}, Dims{3, 7, 9, 13}, Dims{64, 11, 11, 64}, Dims{2, 4, 4, 8}}) {
    const Dims y{x[0], x[1] / 2, x[2] / 2, x[3]};
    check({"max_pool2d_backward_relu_bias", {f32(x), f32(y)}, {}, kReduction, {{-1, 2}, {-1, 1}}});
  }
  check({"max_pool2d_backward_relu_bias", {f32({2, 9, 9, 16}), f32({2, 5, 5, 16})},
         {{"ksize", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
          {"padding", "SAME"}},
         kReduction, {{-1, 2}, {-1, 1}}});
  check({"max_pool2d_backward_relu_bias", {f32({2, 16, 8, 8}), f32({2, 16, 4, 4})},
         {{"data_format", "NCHW"}}, kReduction, {{-1, 2}, {-1, 1}}});
}

TEST(LoopKernels, ReluGrad) {
  // Sizes around the vector widths (4 and 8 lanes) and large enough to run on several threads.
  for (Dims d : {Dims{}, Dims{1}, Dims{7}, Dims{8}, Dims{13}, Dims{2, 3, 5}, Dims{64, 26, 26, 32},
                 Dims{300001}})
    check({"relu_grad", {f32(d), f32(d)}, {}, kElementwise, {}, 0, kBoth});
}

// x NaN gives 0, x = +-0 gives 0, a NaN or inf dy passes where x > 0; dx may be dy's or x's buffer.
TEST(LoopKernels, ReluGradSpecialValuesAndInPlace) {
  const float dy[11] = {1, NAN, 2, -3, INFINITY, 5, -0.0f, 7, NAN, 9, 10};
  const float x[11] = {NAN, 1, 0, -0.0f, 2, -1, 3, INFINITY, -2, -INFINITY, 1e-40f};
  for (int32_t dtype : kBoth) {
    OpInstance inst = instance("relu_grad", {f32({11}), f32({11})}, {});
    RetypedDesc rd(inst, dtype);
    std::vector<Bytes> in(2);
    for (int k = 0; k < 2; ++k) {
      const float* v = k == 0 ? dy : x;
      if (dtype == DLRT_F32) {
        in[k].resize(sizeof dy);
        std::memcpy(in[k].data(), v, sizeof dy);
      } else {
        std::vector<double> w(v, v + 11);
        in[k].resize(11 * sizeof(double));
        std::memcpy(in[k].data(), w.data(), in[k].size());
      }
    }
    const auto ref = run_reference(rd.d, in, 0);
    for (const std::map<size_t, size_t>& alias : {std::map<size_t, size_t>{}, {{0, 0}}, {{0, 1}}}) {
      const auto out = run_plugin(cpu(), rd.d, in, 0, alias);
      ASSERT_EQ(out.size(), 1u);
      expect_close(rd.out[0], out[0], ref[0], kExact, "relu_grad special values");
    }
  }
}

// Max pooling with the default 2x2 windows, stride 2, VALID (loop_pool.cc's one-pass path):
// channel counts around the vector widths, odd H and W (a last row/column in no window), values
// with many ties and some NaN (the first NaN of a window wins), forward and backward, exactly.
TEST(LoopKernels, MaxPool2x2) {
  for (Dims d : {Dims{1, 2, 2, 1}, Dims{2, 6, 6, 13}, Dims{3, 7, 5, 8}, Dims{2, 5, 9, 21},
                 Dims{8, 11, 11, 64}, Dims{64, 26, 26, 32}}) {
    for (bool nans : {false, true}) {
      OpInstance fwd = instance("max_pool2d", {f32(d)}, {});
      const dlrt_tensor_desc& yd = *fwd.desc().outputs[0];
      OpInstance bwd =
          instance("max_pool2d_backward", {f32(d), f32(Dims(yd.dims, yd.dims + yd.rank))}, {});
      std::mt19937_64 rng(d.size() * 7 + d.back() + nans);
      std::uniform_int_distribution<int> v(0, nans ? 3 : 2);
      Bytes x(bytes_of(*fwd.desc().inputs[0]));
      float* xf = reinterpret_cast<float*>(x.data());
      for (int64_t i = 0; i < numel_of(*fwd.desc().inputs[0]); ++i)
        xf[i] = v(rng) == 3 ? NAN : static_cast<float>(v(rng));
      Bytes dy = random_tensor(yd, {}, rng);
      const std::string what = dlrt::plugin::dims_string(d) + (nans ? " with NaN" : "");
      for (Cpu* c : {&cpu(), &cpu1()}) {
        auto y = run_plugin(*c, fwd.desc(), {x}, 0);
        ASSERT_EQ(y.size(), 1u);
        expect_close(yd, y[0], run_reference(fwd.desc(), {x}, 0)[0], kExact, "max_pool2d " + what);
        auto dx = run_plugin(*c, bwd.desc(), {x, dy}, 0);
        ASSERT_EQ(dx.size(), 1u);
        expect_close(*bwd.desc().outputs[0], dx[0], run_reference(bwd.desc(), {x, dy}, 0)[0],
                     kExact, "max_pool2d_backward " + what);
      }
    }
  }
}

// The bf16 2x2 pool (mixed precision's MaxPool2D) equals the f32 one on the same values, bit
// for bit, ties and NaNs included (values 0, 1, 2 and NaN, as above): both pick the first max,
// and neither rounds anything. The fused max_pool2d_backward_relu_bias too, whose db is the f32
// kernel's rounded once to bf16 (both sum in the same order); windows whose max is 0 or NaN
// are cut by its ReLU mask.
TEST(LoopKernels, MaxPool2x2Bf16EqualsF32) {
  auto to_bf16 = [](const Bytes& f) {
    Bytes h(f.size() / 2);
    for (size_t i = 0; i < f.size() / 4; ++i) {
      float v;
      std::memcpy(&v, f.data() + 4 * i, 4);
      const uint16_t b = dlrt::plugin::float_to_bf16(v);
      std::memcpy(h.data() + 2 * i, &b, 2);
    }
    return h;
  };
  auto to_f32 = [](const Bytes& h) {
    Bytes f(h.size() * 2);
    for (size_t i = 0; i < h.size() / 2; ++i) {
      uint16_t b;
      std::memcpy(&b, h.data() + 2 * i, 2);
      const float v = dlrt::plugin::bf16_to_float(b);
      std::memcpy(f.data() + 4 * i, &v, 4);
    }
    return f;
  };
  auto same = [](const Bytes& a, const Bytes& b) {  // f32 buffers, NaN == NaN
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size() / 4; ++i) {
      float x, y;
      std::memcpy(&x, a.data() + 4 * i, 4);
      std::memcpy(&y, b.data() + 4 * i, 4);
      if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
    }
    return true;
  };
  for (Dims d : {Dims{1, 2, 2, 1}, Dims{2, 6, 6, 13}, Dims{3, 7, 5, 8}, Dims{64, 26, 26, 32}}) {
    Dims yd = {d[0], d[1] / 2, d[2] / 2, d[3]};
    OpInstance f32_fwd = instance("max_pool2d", {f32(d)}, {});
    OpInstance f32_bwd = instance("max_pool2d_backward", {f32(d), f32(yd)}, {});
    OpInstance b_fwd = instance("max_pool2d", {of(DLRT_BF16, d)}, {});
    OpInstance b_bwd = instance("max_pool2d_backward", {of(DLRT_BF16, d), of(DLRT_BF16, yd)}, {});
    std::mt19937_64 rng(d.size() * 5 + d.back());
    std::uniform_int_distribution<int> v(0, 3);
    Bytes x(bytes_of(*f32_fwd.desc().inputs[0]));
    float* xf = reinterpret_cast<float*>(x.data());
    for (int64_t i = 0; i < numel_of(*f32_fwd.desc().inputs[0]); ++i)
      xf[i] = v(rng) == 3 ? NAN : static_cast<float>(v(rng));
    const Bytes dy = to_f32(to_bf16(random_tensor(*f32_bwd.desc().inputs[1], {}, rng)));
    const std::string what = dlrt::plugin::dims_string(d);
    Cpu& c = cpu();
    EXPECT_TRUE(same(to_f32(run_plugin(c, b_fwd.desc(), {to_bf16(x)}, 0).at(0)),
                     run_plugin(c, f32_fwd.desc(), {x}, 0).at(0)))
        << "max_pool2d " << what;
    EXPECT_TRUE(same(to_f32(run_plugin(c, b_bwd.desc(), {to_bf16(x), to_bf16(dy)}, 0).at(0)),
                     run_plugin(c, f32_bwd.desc(), {x, dy}, 0).at(0)))
        << "max_pool2d_backward " << what;
    OpInstance f32_fused = instance("max_pool2d_backward_relu_bias", {f32(d), f32(yd)}, {});
    OpInstance b_fused =
        instance("max_pool2d_backward_relu_bias", {of(DLRT_BF16, d), of(DLRT_BF16, yd)}, {});
    for (Cpu* cc : {&cpu(), &cpu1()}) {
      const auto got = run_plugin(*cc, b_fused.desc(), {to_bf16(x), to_bf16(dy)}, 0);
      const auto want = run_plugin(*cc, f32_fused.desc(), {x, dy}, 0);
      ASSERT_EQ(got.size(), 2u);
      EXPECT_TRUE(same(to_f32(got[0]), want.at(0))) << "max_pool2d_backward_relu_bias dz " << what;
      EXPECT_TRUE(same(to_f32(got[1]), to_f32(to_bf16(want.at(1)))))
          << "max_pool2d_backward_relu_bias db " << what;
    }
  }
}

// bf16 relu_grad (vector path; f16 on the bits) equals the f32 kernel on the same values, bit
// for bit: it only selects dy or 0. NaNs, zeros and infinities of both signs included; odd
// sizes reach the scalar tails.
TEST(LoopKernels, ReluGradSixteenBitEqualsF32) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int32_t dt : {DLRT_BF16, DLRT_F16}) {
    for (int64_t n : {int64_t{1}, int64_t{13}, int64_t{1000}, int64_t{100003}}) {
      std::mt19937 gen(static_cast<unsigned>(n + dt));
      std::uniform_real_distribution<float> u(-4.f, 4.f);
      std::vector<float> x(n), dy(n);
      const float special[] = {0.f, -0.f, inf, -inf, NAN, -NAN, 1.f, -1.f};
      for (int64_t i = 0; i < n; ++i) {
        x[i] = i % 7 == 0 ? special[(i / 7) % 8] : u(gen);
        dy[i] = i % 11 == 0 ? special[(i / 11) % 8] : u(gen);
      }
      std::vector<uint16_t> xh(n), dyh(n);
      dlrt::plugin::float_to_narrow(dt, x.data(), xh.data(), n);
      dlrt::plugin::float_to_narrow(dt, dy.data(), dyh.data(), n);
      dlrt::plugin::narrow_to_float(dt, xh.data(), x.data(), n);  // the values both see
      dlrt::plugin::narrow_to_float(dt, dyh.data(), dy.data(), n);
      Bytes xb(n * 4), dyb(n * 4), xhb(n * 2), dyhb(n * 2);
      std::memcpy(xb.data(), x.data(), n * 4);
      std::memcpy(dyb.data(), dy.data(), n * 4);
      std::memcpy(xhb.data(), xh.data(), n * 2);
      std::memcpy(dyhb.data(), dyh.data(), n * 2);
      OpInstance f = instance("relu_grad", {f32({n}), f32({n})}, {});
      OpInstance h = instance(
          "relu_grad", {of(static_cast<dlrt_dtype>(dt), {n}), of(static_cast<dlrt_dtype>(dt), {n})},
          {});
      const Bytes want = run_plugin(cpu(), f.desc(), {dyb, xb}, 0).at(0);
      const Bytes got = run_plugin(cpu(), h.desc(), {dyhb, xhb}, 0).at(0);
      for (int64_t i = 0; i < n; ++i) {
        float w;
        std::memcpy(&w, want.data() + 4 * i, 4);
        uint16_t g;
        std::memcpy(&g, got.data() + 2 * i, 2);
        const float gv = static_cast<float>(dlrt::plugin::narrow_to_double(dt, g));
        ASSERT_TRUE(gv == w || (std::isnan(gv) && std::isnan(w)))
            << dlrt::plugin::dtype_name(dt) << " n=" << n << " i=" << i << ": x " << x[i] << " dy "
            << dy[i] << " want " << w << " got " << gv;
      }
    }
  }
}

TEST(LoopKernels, ReduceMaxGrad) {
  struct R {
    Dims x;
    dlrt::ops::Ints axes;
    bool keepdims;
  };
  for (const R& r : std::vector<R>{{{5}, {}, false},
                                   {{4, 6}, {1}, false},
                                   {{4, 6}, {0}, true},
                                   {{3, 4, 5}, {0, 2}, false},
                                   {{3, 1, 5}, {1}, true},
                                   {{2, 3, 4, 5}, {-1, 1}, true},
                                   {{512, 300}, {1}, false}}) {
    OpInstance fwd =
        instance("reduce_max", {f32(r.x)}, {{"axes", r.axes}, {"keepdims", r.keepdims}});
    const Dims y = fwd.output(0).dims;
    // Integer-valued x makes ties: the gradient is split among them.
    check({"reduce_max_grad",
           {f32(r.x), f32(y), f32(y)},
           {{"axes", r.axes}, {"keepdims", r.keepdims}},
           kElementwise,
           {{-3, 3}},
           0,
           {}});
  }
}

// reduce_max_grad with y really being reduce_max(x) and integer x (ties), so the split matters.
TEST(LoopKernels, ReduceMaxGradWithTies) {
  OpInstance inst =
      instance("reduce_max_grad", {f32({64, 50}), f32({64}), f32({64})}, {{"axes", {1}}});
  const dlrt_op_desc& d = inst.desc();
  std::mt19937_64 rng(7);
  Bytes x = random_tensor(*d.inputs[0], {-3, 3}, rng);
  for (size_t i = 0; i < 64 * 50; ++i) {
    float* f = reinterpret_cast<float*>(x.data());
    f[i] = std::round(f[i]);
  }
  Bytes y(64 * 4);
  for (int r = 0; r < 64; ++r) {
    float m = -INFINITY;
    for (int j = 0; j < 50; ++j) m = std::max(m, reinterpret_cast<float*>(x.data())[r * 50 + j]);
    reinterpret_cast<float*>(y.data())[r] = m;
  }
  Bytes dy = random_tensor(*d.inputs[2], {}, rng);
  const std::vector<Bytes> in = {x, y, dy};
  auto out = run_plugin(cpu(), d, in, 0);
  auto ref = run_reference(d, in, 0);
  ASSERT_EQ(out.size(), 1u);
  expect_close(*d.outputs[0], out[0], ref[0], kElementwise, "reduce_max_grad ties");
}

// ---- shapes, cast, fill ------------------------------------------------------------------

TEST(LoopKernels, CopyReshapeFlatten) {
  for (dlrt_dtype t : {DLRT_F32, DLRT_U8, DLRT_I64, DLRT_F16}) {
    for (Dims d : {Dims{}, Dims{1}, Dims{7}, Dims{3, 5, 2}, Dims{1000, 333}}) {
      check({"copy", {of(t, d)}, {}, kExact});
      if (!d.empty()) check({"flatten", {of(t, d)}, {}, kExact});
      check({"reshape", {of(t, d)}, {{"shape", dlrt::ops::Ints{-1}}}, kExact});
    }
    check({"reshape", {of(t, {6, 4})}, {{"shape", dlrt::ops::Ints{2, -1, 3}}}, kExact});
  }
}

TEST(LoopKernels, Transpose) {
  struct T {
    Dims x;
    dlrt::ops::Ints perm;
  };
  for (dlrt_dtype t : {DLRT_F32, DLRT_U8, DLRT_F64, DLRT_BF16})
    for (const T& c : std::vector<T>{{{}, {}},
                                     {{5}, {0}},
                                     {{3, 4}, {1, 0}},
                                     {{1, 7}, {1, 0}},
                                     {{2, 3, 4}, {2, 0, 1}},
                                     {{2, 3, 4, 5}, {0, 3, 1, 2}},
                                     {{2, 3, 4, 5}, {0, 1, 3, 2}},
                                     {{512, 513}, {1, 0}},
                                     {{64, 7, 7, 64}, {0, 3, 1, 2}}})
      check({"transpose", {of(t, c.x)}, {{"perm", c.perm}}, kExact});
}

TEST(LoopKernels, BroadcastTo) {
  struct B {
    Dims x, shape;
  };
  for (dlrt_dtype t : {DLRT_F32, DLRT_I32, DLRT_BOOL})
    for (const B& c : std::vector<B>{{{}, {}},
                                     {{}, {5}},
                                     {{1}, {3, 4}},
                                     {{4}, {3, 4}},
                                     {{3, 1}, {3, 4}},
                                     {{2, 1, 3}, {4, 2, 5, 3}},
                                     {{1000}, {300, 1000}},
                                     {{300, 1}, {300, 1000}}})
      check(
          {"broadcast_to", {of(t, c.x)}, {{"shape", dlrt::ops::Ints(c.shape)}}, kExact, {{0, 1}}});
}

TEST(LoopKernels, CastEveryPair) {
  const std::vector<dlrt_dtype> types = {DLRT_F32, DLRT_F64, DLRT_I32, DLRT_I64,
                                         DLRT_U8,  DLRT_I8,  DLRT_U16, DLRT_I16,
                                         DLRT_U32, DLRT_U64, DLRT_BOOL};
  for (dlrt_dtype from : types)
    for (dlrt_dtype to : types)
      for (Dims d : {Dims{}, Dims{9}, Dims{300, 301}}) {
        // Floats cover saturation, truncation toward zero and negatives; integers their range
        // (the 16-64-bit ones as random bits: random_tensor).
        Range r = dlrt::plugin::dtype_is_float(from) ? Range{-300.7, 300.7}
                  : from == DLRT_U8                  ? Range{0, 255}
                  : from == DLRT_BOOL                ? Range{0, 1}
                                                     : Range{-128, 300};
        check({"cast", {of(from, d)}, {{"dtype", to}}, kExact, {r}});
      }
}

TEST(LoopKernels, CastOfNanAndHugeValues) {
  OpInstance inst = instance("cast", {f32({6})}, {{"dtype", DLRT_I32}});
  const float v[6] = {NAN, 1e20f, -1e20f, 2.9f, -2.9f, INFINITY};
  Bytes x(sizeof v);
  std::memcpy(x.data(), v, sizeof v);
  for (dlrt_dtype to : {DLRT_I32, DLRT_I64, DLRT_U8, DLRT_I8, DLRT_U16, DLRT_I16, DLRT_U32,
                        DLRT_U64, DLRT_BOOL, DLRT_F64}) {
    OpInstance i2 = instance("cast", {f32({6})}, {{"dtype", to}});
    auto out = run_plugin(cpu(), i2.desc(), {x}, 0);
    auto ref = run_reference(i2.desc(), {x}, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], ref[0]) << "cast f32 -> " << dlrt::plugin::dtype_name(to);
  }
}

// f16/bf16 (the reference declines them): known encodings, rounding ties to even in one step,
// overflow to inf, subnormals, NaN and signed zero, and the way back exactly.
TEST(LoopKernels, CastToAndFromF16AndBF16) {
  const float in[] = {
      1.0f,     65504.0f, 65520.0f,     65519.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
      0x1p-24f, 0x1p-25f, 3 * 0x1p-25f, NAN,      -INFINITY,       -0.0f};
  const uint16_t f16[] = {0x3C00, 0x7BFF, 0x7C00, 0x7BFF, 0x3C00, 0x3C02,
                          0x0001, 0x0000, 0x0002, 0x7E00, 0xFC00, 0x8000};
  const float bin[] = {1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 0x1p-133f, NAN, -3.0e38f};
  const uint16_t bf16[] = {0x3F80, 0x3F80, 0x3F82, 0x0001, 0x7FC0, 0xFF62};
  auto cast = [](dlrt_dtype from, dlrt_dtype to, const void* v, size_t n, size_t es) {
    OpInstance inst = instance("cast", {of(from, {static_cast<int64_t>(n)})}, {{"dtype", to}});
    Bytes x(n * es);
    std::memcpy(x.data(), v, x.size());
    auto out = run_plugin(cpu(), inst.desc(), {x}, 0);
    return out.at(0);
  };
  auto as_u16 = [](const Bytes& b) {
    std::vector<uint16_t> v(b.size() / 2);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  };
  EXPECT_EQ(as_u16(cast(DLRT_F32, DLRT_F16, in, 12, 4)), std::vector<uint16_t>(f16, f16 + 12));
  EXPECT_EQ(as_u16(cast(DLRT_F32, DLRT_BF16, bin, 6, 4)), std::vector<uint16_t>(bf16, bf16 + 6));
  // The same values and NaNs with payloads only in the low half (which rounding alone would
  // turn into infinity) 1000 times over, so the vector loops run them, and back exactly.
  {
    const uint32_t nan_bits[] = {0x7F800001u, 0xFFA00000u};
    const uint16_t nan_bf16[] = {0x7FC0, 0xFFE0};
    std::vector<float> many;
    std::vector<uint16_t> want;
    for (int r = 0; r < 1000; ++r) {
      many.insert(many.end(), bin, bin + 6);
      want.insert(want.end(), bf16, bf16 + 6);
      for (int k = 0; k < 2; ++k) {
        float v;
        std::memcpy(&v, &nan_bits[k], 4);
        many.push_back(v);
        want.push_back(nan_bf16[k]);
      }
    }
    const std::vector<uint16_t> got = as_u16(cast(DLRT_F32, DLRT_BF16, many.data(), many.size(), 4));
    EXPECT_EQ(got, want);
    const Bytes wide = cast(DLRT_BF16, DLRT_F32, want.data(), want.size(), 2);
    std::vector<uint32_t> bits(want.size());
    std::memcpy(bits.data(), wide.data(), wide.size());
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) bad += bits[i] != uint32_t{want[i]} << 16;
    EXPECT_EQ(bad, 0u) << "bf16 -> f32 is not exact";
  }
  // Back to f32: every f16/bf16 value is an f32 exactly.
  const Bytes back = cast(DLRT_F16, DLRT_F32, f16, 12, 2);
  std::vector<float> f(12);
  std::memcpy(f.data(), back.data(), back.size());
  EXPECT_EQ(f[1], 65504.0f);
  EXPECT_EQ(f[2], INFINITY);
  EXPECT_EQ(f[6], 0x1p-24f);
  EXPECT_TRUE(std::isnan(f[9]));
  EXPECT_TRUE(std::signbit(f[11]) && f[11] == 0.0f);
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up (through f32 it
  // would first become the tie 1 + 2^-11 and then round down to 1).
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(as_u16(cast(DLRT_F64, DLRT_F16, &d, 1, 8)), std::vector<uint16_t>{0x3C01});
  // f16 -> i32 truncates as the float casts do.
  const uint16_t h[] = {0x4170 /* 2.71875 */, 0xC170 /* -2.71875 */};
  const Bytes ints = cast(DLRT_F16, DLRT_I32, h, 2, 2);
  std::vector<int32_t> iv(2);
  std::memcpy(iv.data(), ints.data(), ints.size());
  EXPECT_EQ(iv, (std::vector<int32_t>{2, -2}));
}

// f32 -> bf16 on random bit patterns (every exponent: subnormals, NaNs with any payload,
// infinities) and on ties, at lengths around the vector widths, against float_to_bf16 value by
// value, and back exactly. The conversion loops (convert_16bit.hpp) take 32 values at a time
// through AVX512-BF16's instruction where no value of the 32 is subnormal, else the integer
// rounding: with one subnormal in 256 values most blocks take the first path and some the
// second. ctest runs this under ONEDNN_MAX_CPU_ISA caps for the AVX-512, AVX2 and baseline
// builds as well (cpu_16bit_loops_*, cpu_loop_kernels_portable).
TEST(LoopKernels, CastF32Bf16OnEveryBitPatternMatchesScalarRounding) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<uint32_t> bits;
  for (size_t n :
       {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{31}, size_t{33}, size_t{100003}}) {
    std::vector<uint32_t> x(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = bits(rng);
      if (i % 7 == 3) x[i] = (x[i] & 0xFFFF0000u) | 0x8000u;  // a tie
    }
    OpInstance to =
        instance("cast", {of(DLRT_F32, {static_cast<int64_t>(n)})}, {{"dtype", DLRT_BF16}});
    Bytes in(n * 4);
    std::memcpy(in.data(), x.data(), in.size());
    const Bytes out = run_plugin(cpu(), to.desc(), {in}, 0).at(0);
    std::vector<uint16_t> got(n);
    std::memcpy(got.data(), out.data(), out.size());
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, &x[i], 4);
      if (got[i] != dlrt::plugin::float_to_bf16(f) && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << "n " << n << ", first at " << first << ": bits " << std::hex
                       << (first < n ? x[first] : 0u);
    OpInstance back =
        instance("cast", {of(DLRT_BF16, {static_cast<int64_t>(n)})}, {{"dtype", DLRT_F32}});
    const Bytes wide = run_plugin(cpu(), back.desc(), {out}, 0).at(0);
    std::vector<uint32_t> w(n);
    std::memcpy(w.data(), wide.data(), wide.size());
    size_t inexact = 0;
    for (size_t i = 0; i < n; ++i) inexact += w[i] != uint32_t{got[i]} << 16;
    EXPECT_EQ(inexact, 0u) << "n " << n << ": bf16 -> f32 is not exact";
  }
}

TEST(LoopKernels, Fill) {
  for (dlrt_dtype t : {DLRT_F32, DLRT_F64, DLRT_I32, DLRT_I64, DLRT_U8, DLRT_I8, DLRT_U16,
                       DLRT_I16, DLRT_U32, DLRT_U64, DLRT_BOOL})
    for (Dims d : {Dims{}, Dims{1}, Dims{5, 3}, Dims{1000, 1001}})
      for (double v : {0.0, -2.75, 300.5, 1e19})
        check({"fill", {}, {{"shape", dlrt::ops::Ints(d)}, {"value", v}, {"dtype", t}}, kExact});
}

// ---- random ------------------------------------------------------------------------------

TEST(LoopKernels, RandomOpsEqualTheReferenceBitForBit) {
  for (Dims d : {Dims{}, Dims{1}, Dims{3}, Dims{5}, Dims{7, 9}, Dims{1001, 999}})
    for (uint64_t off : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 40}) {
      for (int64_t seed : {int64_t{0}, int64_t{42}, int64_t{-1}}) {
        check({"random_uniform",
               {},
               {{"shape", dlrt::ops::Ints(d)}, {"seed", seed}, {"minval", -0.5}, {"maxval", 2.0}},
               kExact,
               {},
               off});
        check({"random_normal",
               {},
               {{"shape", dlrt::ops::Ints(d)}, {"seed", seed}, {"mean", 1.0}, {"stddev", 0.3}},
               kExact,
               {},
               off});
      }
      for (double rate : {0.0, 0.25, 0.9})
        check(
            {"dropout", {f32(d)}, {{"rate", rate}, {"seed", int64_t{7}}}, kExact, {}, off, kBoth});
    }
}

// multinomial: the same ids as the reference for every shape, seed, offset and thread count
// (each row's normaliser is summed in id order on both), wide logit ranges included.
TEST(LoopKernels, MultinomialEqualsTheReferenceBitForBit) {
  for (Dims d : {Dims{1, 1}, Dims{3, 7}, Dims{64, 256}, Dims{5, 5000}})
    for (int64_t samples : {int64_t{1}, int64_t{4}})
      for (uint64_t off : {uint64_t{0}, uint64_t{1} << 40})
        for (double range : {2.0, 60.0})
          check({"multinomial",
                 {f32(d)},
                 {{"num_samples", samples}, {"seed", int64_t{-1}}},
                 kExact,
                 {{-range, range}},
                 off});
}

// Rows with -inf entries, all -inf, NaN and +inf: the same ids (-1 for the last three).
TEST(LoopKernels, MultinomialMaskedAndInvalidRows) {
  const float inf = INFINITY;
  const float v[5][4] = {{-inf, 1.0f, -inf, 0.5f},
                         {-inf, -inf, -inf, -inf},
                         {0.0f, NAN, 1.0f, 2.0f},
                         {0.0f, inf, 1.0f, 2.0f},
                         {-inf, -inf, -inf, 3.0f}};
  Bytes x(sizeof v);
  std::memcpy(x.data(), v, sizeof v);
  OpInstance inst = instance("multinomial", {f32({5, 4})}, {{"num_samples", 64}, {"seed", 3}});
  for (Cpu* c : {&cpu(), &cpu1()}) {
    auto out = run_plugin(*c, inst.desc(), {x}, 9);
    auto ref = run_reference(inst.desc(), {x}, 9);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], ref[0]);
    const auto* ids = reinterpret_cast<const int64_t*>(out[0].data());
    for (int s = 0; s < 64; ++s) {
      EXPECT_TRUE(ids[s] == 1 || ids[s] == 3) << ids[s];
      EXPECT_EQ(ids[64 + s], -1);
      EXPECT_EQ(ids[128 + s], -1);
      EXPECT_EQ(ids[192 + s], -1);
      EXPECT_EQ(ids[256 + s], 3);
    }
  }
}

// ---- training ----------------------------------------------------------------------------

TEST(LoopKernels, SparseSoftmaxCrossEntropy) {
  for (dlrt_dtype lt : {DLRT_I32, DLRT_I64})
    for (Dims d :
         {Dims{1, 1}, Dims{1, 10}, Dims{7, 3}, Dims{64, 10}, Dims{4096, 10}, Dims{33, 1000}}) {
      // Labels run one past each end: those rows are NaN.
      check({"sparse_softmax_cross_entropy",
             {f32(d), of(lt, {d[0]})},
             {},
             kReduction,
             {{-8, 8}, {-1, static_cast<double>(d[1])}},
             0,
             kBoth});
    }
}

TEST(LoopKernels, Argmax) {
  for (dlrt_dtype ot : {DLRT_I32, DLRT_I64})
    for (const auto& [d, axis] : std::vector<std::pair<Dims, int64_t>>{{{1}, 0},
                                                                       {{7}, 0},
                                                                       {{64, 10}, -1},
                                                                       {{64, 10}, 0},
                                                                       {{3, 4, 5}, 1},
                                                                       {{5000, 10}, 1},
                                                                       {{2, 3000, 7}, 1}})
      check(
          {"argmax", {f32(d)}, {{"axis", axis}, {"output_type", ot}}, kExact, {{-3, 3}}, 0, kBoth});
}

TEST(LoopKernels, ArgmaxNanAndTies) {
  OpInstance inst = instance("argmax", {f32({3, 4})}, {});
  const float v[12] = {1, 3, 3, 0, 2, NAN, 5, NAN, -1, -1, -1, -1};
  Bytes x(sizeof v);
  std::memcpy(x.data(), v, sizeof v);
  auto out = run_plugin(cpu(), inst.desc(), {x}, 0);
  ASSERT_EQ(out.size(), 1u);
  const int32_t* y = reinterpret_cast<const int32_t*>(out[0].data());
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[1], 1);
  EXPECT_EQ(y[2], 0);
}

TEST(LoopKernels, EqualCount) {
  for (dlrt_dtype a : {DLRT_I32, DLRT_I64})
    for (dlrt_dtype b : {DLRT_I32, DLRT_I64})
      for (Dims d : {Dims{1}, Dims{64}, Dims{100001}})
        check({"equal_count", {of(a, d), of(b, d)}, {}, kExact, {{0, 3}, {0, 3}}});
}

TEST(LoopKernels, GatherRows) {
  for (dlrt_dtype it : {DLRT_I32, DLRT_I64})
    for (dlrt_dtype pt : {DLRT_F32, DLRT_U8, DLRT_F64})
      for (const auto& [p, b] : std::vector<std::pair<Dims, int64_t>>{
               {{1}, 1}, {{10}, 3}, {{10, 3}, 7}, {{100, 28, 28, 1}, 64}, {{60, 5}, 20000}})
        // Indices run one past each end: those rows are zero.
        check({"gather_rows",
               {of(pt, p), of(it, {b})},
               {},
               kExact,
               {{0, 255}, {-1, static_cast<double>(p[0])}}});
}

// ---- optimizer updates -------------------------------------------------------------------

TEST(LoopKernels, SgdUpdate) {
  for (Dims d : {Dims{}, Dims{1}, Dims{13}, Dims{3, 3, 1, 32}, Dims{300007}})
    for (double mom : {0.0, 0.9})
      for (bool nesterov : {false, true})
        check({"sgd_update",
               {f32(d), f32(d), f32(d), f32({})},  // learning_rate: an input (version 2)
               {{"momentum", mom}, {"nesterov", nesterov}},
               kElementwise,
               {{}, {}, {}, {0.001, 0.1}},
               0,
               kBoth});
}

TEST(LoopKernels, AdamUpdate) {
  for (Dims d : {Dims{}, Dims{1}, Dims{13}, Dims{3, 3, 1, 32}, Dims{300007}}) {
    // step is the 1-based step number: one run with step 1 and one with step 1000.
    for (double step : {1.0, 1000.0}) {
      OpInstance inst =
          instance("adam_update", {f32(d), f32(d), f32(d), f32(d), f32({}), f32({})}, {});
      for (int32_t dtype : kBoth) {
        RetypedDesc rd(inst, dtype);
        std::mt19937_64 rng(static_cast<uint64_t>(step) + d.size());
        std::vector<Bytes> in;
        for (size_t i = 0; i < 4; ++i)
          in.push_back(random_tensor(rd.in[i], i == 3 ? Range{0, 1} : Range{}, rng));
        for (double value : {step, 0.001}) {  // step, then learning_rate
          Bytes s(dtype == DLRT_F64 ? 8 : 4);
          if (dtype == DLRT_F64) std::memcpy(s.data(), &value, 8);
          else {
            float f = static_cast<float>(value);
            std::memcpy(s.data(), &f, 4);
          }
          in.push_back(s);
        }
        auto ref = run_reference(rd.d, in, 0);
        auto out = run_plugin(cpu(), rd.d, in, 0);
        ASSERT_EQ(out.size(), 3u);
        for (size_t o = 0; o < 3; ++o)
          expect_close(rd.out[o], out[o], ref[o], kElementwise,
                       "adam_update output " + std::to_string(o));
      }
    }
  }
}

// The executor runs updates in place: outputs given the inputs' buffers give the same bits as
// separate outputs.
TEST(LoopKernels, UpdatesInPlaceEqualOutOfPlace) {
  for (Dims d : {Dims{1}, Dims{37}, Dims{300007}}) {
    OpInstance adam =
        instance("adam_update", {f32(d), f32(d), f32(d), f32(d), f32({}), f32({})}, {});
    std::mt19937_64 rng(11);
    std::vector<Bytes> in;
    for (size_t i = 0; i < 4; ++i)
      in.push_back(random_tensor(*adam.desc().inputs[i], i == 3 ? Range{0, 1} : Range{}, rng));
    Bytes s(4), lr(4);
    const float step = 3, rate = 0.001f;
    std::memcpy(s.data(), &step, 4);
    std::memcpy(lr.data(), &rate, 4);
    in.push_back(s);
    in.push_back(lr);
    auto separate = run_plugin(cpu(), adam.desc(), in, 0);
    auto inplace = run_plugin(cpu(), adam.desc(), in, 0, {{0, 0}, {1, 2}, {2, 3}});
    ASSERT_EQ(separate.size(), 3u);
    ASSERT_EQ(inplace.size(), 3u);
    for (size_t o = 0; o < 3; ++o) EXPECT_EQ(inplace[o], separate[o]) << "adam output " << o;
    auto ref = run_reference(adam.desc(), in, 0);
    expect_close(*adam.desc().outputs[0], inplace[0], ref[0], kElementwise, "adam in place");

    OpInstance sgd = instance("sgd_update", {f32(d), f32(d), f32(d), f32({})}, {{"momentum", 0.9}});
    std::vector<Bytes> sin(in.begin(), in.begin() + 3);
    sin.push_back(lr);
    auto s_sep = run_plugin(cpu(), sgd.desc(), sin, 0);
    auto s_in = run_plugin(cpu(), sgd.desc(), sin, 0, {{0, 0}, {1, 2}});
    ASSERT_EQ(s_in.size(), 2u);
    for (size_t o = 0; o < 2; ++o) EXPECT_EQ(s_in[o], s_sep[o]) << "sgd output " << o;
  }
}

// Element-wise ops may be given an output equal to an input too.
TEST(LoopKernels, ElementwiseInPlace) {
  OpInstance inst = instance("mul", {f32({1000, 100}), f32({100})}, {});
  std::mt19937_64 rng(3);
  std::vector<Bytes> in = {random_tensor(*inst.desc().inputs[0], {}, rng),
                           random_tensor(*inst.desc().inputs[1], {}, rng)};
  auto ref = run_reference(inst.desc(), in, 0);
  auto out = run_plugin(cpu(), inst.desc(), in, 0, {{0, 0}});
  ASSERT_EQ(out.size(), 1u);
  expect_close(*inst.desc().outputs[0], out[0], ref[0], kElementwise, "mul in place");
}

// ---- threads -----------------------------------------------------------------------------

TEST(LoopKernels, OneThreadGivesTheSameResults) {
  ASSERT_TRUE(cpu1().ok());
  check({"add", {f32({1000, 333}), f32({333})}, {}, kElementwise}, cpu1());
  check({"bias_add_grad", {f32({5000, 32})}, {{"data_format", "NHWC"}}, kReduction}, cpu1());
  check({"random_normal", {}, {{"shape", dlrt::ops::Ints{100001}}}, kExact}, cpu1());
  check({"sparse_softmax_cross_entropy",
         {f32({4096, 10}), of(DLRT_I32, {4096})},
         {},
         kReduction,
         {{-8, 8}, {0, 9}}},
        cpu1());
}

// ---- what the loops refuse ---------------------------------------------------------------

// The loop kernels are f32/f64; an f16/bf16 instance runs the f32 kernel between conversions
// (widening_kernel.hpp; docs/ops.md "16-bit floats"): accepted, with a workspace that holds
// the f32 copies of its 16-bit operands. In place stays in place (adam_update). The numbers
// are the conformance suite's 16-bit cases against the reference.
TEST(LoopKernels, SixteenBitDtypesRunThroughF32) {
  Cpu& c = cpu();
  ASSERT_TRUE(c.ok());
  struct Case {
    std::string op;
    std::vector<TensorType> inputs;
    AttrMap attrs;
  };
  for (const Case& b : std::vector<Case>{
           {"add", {of(DLRT_F16, {3}), of(DLRT_F16, {3})}, {}},
           {"exp", {of(DLRT_BF16, {3})}, {}},
           {"reduce_sum", {of(DLRT_F16, {2, 3})}, {}},
           {"adam_update",
            {of(DLRT_F16, {3}), of(DLRT_F16, {3}), of(DLRT_F16, {3}), of(DLRT_F16, {3}), f32({}),
             f32({})},
            {}},
           {"fill", {}, {{"shape", dlrt::ops::Ints{2}}, {"dtype", DLRT_BF16}}},
       }) {
    OpInstance inst = instance(b.op, b.inputs, b.attrs);
    auto [code, msg] = take_status(c.api().op_supported(c.inst, 0, &inst.desc(), nullptr));
    EXPECT_EQ(code, DLRT_OK) << b.op << ": " << msg;
    dlrt_kernel* k = nullptr;
    size_t ws = 0;
    auto [kc, kmsg] = take_status(c.api().kernel_create(c.dev, &inst.desc(), &k, &ws));
    ASSERT_EQ(kc, DLRT_OK) << b.op << ": " << kmsg;
    size_t wide = 0;
    for (const auto* list : {&inst.inputs(), &inst.outputs()})
      for (const TensorType& t : *list)
        if (t.dtype == DLRT_F16 || t.dtype == DLRT_BF16) wide += t.num_elements() * sizeof(float);
    EXPECT_GE(ws, wide) << b.op;
    c.api().kernel_destroy(k);
  }
}

// The f16 buffer conversions the 16-bit paths use (narrow_float.hpp): F16C, where the CPU has
// it, gives what the portable path through double gives — every f16 pattern widened, and
// random and halfway floats narrowed (NaNs only as NaNs of the same sign).
TEST(LoopKernels, F16cConversionsEqualThePortablePath) {
  if (!dlrt::plugin::cpu_has_f16c()) GTEST_SKIP() << "no F16C on this CPU: the portable path runs";
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> a(all.size()), b(all.size());
  dlrt::plugin::f16_to_float_f16c(all.data(), a.data(), all.size());
  dlrt::plugin::f16_to_float_portable(all.data(), b.data(), all.size());
  for (size_t i = 0; i < all.size(); ++i)
    ASSERT_TRUE((std::isnan(a[i]) && std::isnan(b[i])) || std::memcmp(&a[i], &b[i], 4) == 0) << i;
  std::mt19937 gen(11);
  std::vector<float> f;
  for (int i = 0; i < 100000; ++i) {
    const uint32_t u = gen();
    float x;
    std::memcpy(&x, &u, 4);
    f.push_back(x);
  }
  for (size_t i = 0; i + 1 < 0x7C00; i += 3)  // halfway between neighbours: ties to even
    f.push_back(b[i] + (b[i + 1] - b[i]) / 2);
  std::vector<uint16_t> h1(f.size()), h2(f.size());
  dlrt::plugin::float_to_f16_f16c(f.data(), h1.data(), f.size());
  dlrt::plugin::float_to_f16_portable(f.data(), h2.data(), f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    if (std::isnan(f[i])) {
      EXPECT_EQ(h1[i] & 0xFC00, 0x7C00 & 0xFC00 | (h1[i] & 0x8000)) << i;
      EXPECT_EQ(h1[i] & 0x8000, h2[i] & 0x8000) << i;
      EXPECT_NE(h1[i] & 0x3FF, 0) << i;
      continue;
    }
    ASSERT_EQ(h1[i], h2[i]) << "float " << f[i];
  }
}

TEST(LoopKernels, CostIsFilled) {
  Cpu& c = cpu();
  ASSERT_TRUE(c.ok());
  OpInstance inst = instance("add", {f32({10, 10}), f32({10})}, {});
  dlrt_op_cost cost{};
  cost.struct_size = sizeof(cost);
  EXPECT_EQ(take_status(c.api().op_supported(c.inst, 0, &inst.desc(), &cost)).first, DLRT_OK);
  EXPECT_EQ(cost.flops, 100);
  EXPECT_EQ(cost.bytes, (100 + 10 + 100) * 4);
}

}  // namespace
