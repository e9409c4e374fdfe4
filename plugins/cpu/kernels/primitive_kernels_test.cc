// primitive_kernels_test.cc: the cpu plugin's oneDNN-primitive kernels (kernels/prim_*.cc)
// against the reference kernels, through the plugin's C table (dlopened by the fake host).
//
// Each case instantiates the op with the core's registry (dlrt::ops::instantiate: defaults
// filled, outputs inferred, as the core hands it over), asks op_supported, creates the kernel,
// fills the inputs with random numbers, poisons the outputs with NaN, runs it twice (fresh
// inputs the second time: a kernel is made once and run many times) and compares each run
// with dlrt::reference::run on the same inputs, with docs/ops.md's tolerance:
// max|out - ref| / max(1, max|ref|). Shapes cover batch 1, odd sizes, channels that are not a
// multiple of 8, SAME and VALID, stride 2, dilation, both transpose flags, NCHW. Each family
// also has an f16 case, which runs through f32 (widening_kernel.hpp), and the cases the plugin
// must refuse (a descriptor without pads, INVALID_ARGUMENT for shapes that disagree), with a
// message that names the op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
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
using dlrt::ops::TensorType;
using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

constexpr double kConvTol = 1e-3;    // conv/matmul and their gradients
constexpr double kElemTol = 1e-5;    // element-wise
constexpr double kReduceTol = 1e-4;  // reductions, softmax

TensorType f32(Dims d) { return {DLRT_F32, std::move(d)}; }
TensorType f16(Dims d) { return {DLRT_F16, std::move(d)}; }

// One plugin instance, device and stream for the whole test program. Its kernel choices are
// the rules' (calibrate=skip, unless the options say otherwise), so which kernel a test gets
// never depends on timings (calibration.hpp).
struct Cpu {
  explicit Cpu(std::map<std::string, std::string> options = {}) : lib(DLRT_PLUGIN_FILE) {
    if (!lib.ok()) return;
    options.emplace("calibrate", "skip");
    inst = lib.create(options);
    if (inst == nullptr) return;
    if (take_status(api().device_open(inst, 0, &dev)).first != DLRT_OK) return;
    take_status(api().stream_create(dev, &stream));
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  dlrt_device* dev = nullptr;
  dlrt_stream* stream = nullptr;
};

Cpu& cpu() {
  static Cpu* c = new Cpu();  // never destroyed: oneDNN dislikes teardown at exit
  return *c;
}

// A plugin instance with these options (one per distinct set, kept for the program).
Cpu& cpu_with(const std::map<std::string, std::string>& options) {
  static std::map<std::map<std::string, std::string>, Cpu*> instances;
  Cpu*& c = instances[options];
  if (c == nullptr) c = new Cpu(options);
  return *c;
}

// A plugin instance with the `threads` option set.
Cpu& cpu_with_threads(int threads) { return cpu_with({{"threads", std::to_string(threads)}}); }

// The device's integer attribute `name`, if it has one.
std::optional<int64_t> int_attr(Cpu& c, const std::string& name) {
  if (c.inst == nullptr) return std::nullopt;
  dlrt_device_desc d{};
  d.struct_size = sizeof(d);
  if (take_status(c.api().device_get_desc(c.inst, 0, &d)).first != DLRT_OK) return std::nullopt;
  for (size_t i = 0; i < d.num_attrs; ++i)
    if (d.attrs[i]->name == name && d.attrs[i]->type == DLRT_ATTR_INT) return d.attrs[i]->i;
  return std::nullopt;
}

// The device's string attribute `name`, if it has one.
std::optional<std::string> string_attr(Cpu& c, const std::string& name) {
  if (c.inst == nullptr) return std::nullopt;
  dlrt_device_desc d{};
  d.struct_size = sizeof(d);
  if (take_status(c.api().device_get_desc(c.inst, 0, &d)).first != DLRT_OK) return std::nullopt;
  for (size_t i = 0; i < d.num_attrs; ++i)
    if (d.attrs[i]->name == name && d.attrs[i]->type == DLRT_ATTR_STRING)
      return std::string(d.attrs[i]->s);
  return std::nullopt;
}

// Uniform in [lo, hi), or small integers (many ties) when `integers`.
struct Fill {
  float lo = -1.0f, hi = 1.0f;
  bool integers = false;
  int input0_nan_every = 0;  // > 0: every k-th element of input 0 is NaN
  // A NaN output matches a NaN reference (ops whose outputs carry input NaNs); a NaN against
  // a number, unwritten poison included, still fails.
  bool nan_matches_nan = false;
};

std::vector<float> random_values(int64_t n, const Fill& f, std::mt19937& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  std::uniform_real_distribution<float> u(f.lo, f.hi);
  std::uniform_int_distribution<int> k(0, 2);
  for (float& x : v) x = f.integers ? static_cast<float>(k(rng)) : u(rng);
  return v;
}

dlrt::ops::OpInstance instance(const std::string& op, const std::vector<TensorType>& inputs,
                               const AttrMap& attrs) {
  return dlrt::ops::testing::value_or_throw(dlrt::ops::instantiate(op, inputs, attrs));
}

// Runs `op` on the cpu plugin and on the reference kernels; returns nothing, fails the test.
// The plugin's outputs of the last run go to *outputs when given.
// `constant_inputs` is dlrt_op_desc.constant_inputs (bit i: input i never changes).
void check_op(const std::string& op, const std::vector<TensorType>& inputs, const AttrMap& attrs,
              double tol, const Fill& fill = {}, Cpu& c = cpu(),
              std::vector<std::vector<float>>* outputs = nullptr, uint32_t constant_inputs = 0) {
  SCOPED_TRACE(op);
  ASSERT_NE(c.stream, nullptr) << c.lib.error();
  const dlrt::ops::OpInstance in = instance(op, inputs, attrs);
  dlrt_op_desc desc = in.desc();
  desc.constant_inputs = constant_inputs;
  const dlrt::plugin::OpView view(&desc);

  dlrt_op_cost cost{};
  cost.struct_size = sizeof(cost);
  ASSERT_OK(c.api().op_supported(c.inst, 0, &desc, &cost));
  EXPECT_GT(cost.bytes, 0.0);
  EXPECT_GT(cost.flops, 0.0);
  dlrt_kernel* kernel = nullptr;
  size_t ws_bytes = 0;
  ASSERT_OK(c.api().kernel_create(c.dev, &desc, &kernel, &ws_bytes));

  std::vector<void*> d_in(view.num_inputs()), d_out(view.num_outputs());
  for (size_t i = 0; i < d_in.size(); ++i)
    ASSERT_OK(c.api().mem_alloc(c.dev, view.input(i).bytes, 64, &d_in[i]));
  for (size_t i = 0; i < d_out.size(); ++i)
    ASSERT_OK(c.api().mem_alloc(c.dev, view.output(i).bytes, 64, &d_out[i]));
  void* ws = nullptr;
  if (ws_bytes > 0) ASSERT_OK(c.api().mem_alloc(c.dev, ws_bytes, 64, &ws));

  std::mt19937 rng(12345);
  std::vector<std::vector<float>> first_in;  // round 0's inputs: a constant one keeps them
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("run " + std::to_string(round));
    std::vector<std::vector<float>> h_in, h_out, h_ref;
    std::vector<const void*> in_ptrs;
    std::vector<void*> ref_ptrs;
    for (size_t i = 0; i < d_in.size(); ++i) {
      const bool constant = round > 0 && (constant_inputs >> i & 1u) != 0;
      h_in.push_back(constant ? first_in[i] : random_values(view.input(i).numel, fill, rng));
      if (i == 0 && fill.input0_nan_every > 0)
        for (size_t j = 0; j < h_in[i].size(); j += static_cast<size_t>(fill.input0_nan_every))
          h_in[i][j] = std::numeric_limits<float>::quiet_NaN();
      ASSERT_OK(c.api().memcpy_h2d(c.dev, d_in[i], h_in[i].data(), view.input(i).bytes, nullptr));
    }
    for (size_t i = 0; i < d_out.size(); ++i) {
      std::vector<float> nan(static_cast<size_t>(view.output(i).numel),
                             std::numeric_limits<float>::quiet_NaN());
      ASSERT_OK(c.api().memcpy_h2d(c.dev, d_out[i], nan.data(), view.output(i).bytes, nullptr));
      h_out.push_back(nan);
      h_ref.push_back(nan);
    }
    if (round == 0) first_in = h_in;
    for (auto& v : h_in) in_ptrs.push_back(v.data());
    for (auto& v : h_ref) ref_ptrs.push_back(v.data());

    dlrt_kernel_args args{};
    args.struct_size = sizeof(args);
    args.num_inputs = d_in.size();
    args.inputs = const_cast<const void* const*>(d_in.data());
    args.num_outputs = d_out.size();
    args.outputs = d_out.data();
    args.workspace = ws;
    args.workspace_bytes = ws_bytes;
    ASSERT_OK(c.api().kernel_run(kernel, c.stream, &args));
    ASSERT_OK(c.api().stream_synchronize(c.stream));
    for (size_t i = 0; i < d_out.size(); ++i)
      ASSERT_OK(
          c.api().memcpy_d2h(c.dev, h_out[i].data(), d_out[i], view.output(i).bytes, nullptr));

    dlrt::reference::run(view, in_ptrs.data(), ref_ptrs.data(), 0);
    for (size_t i = 0; i < d_out.size(); ++i) {
      double scale = 1.0, err = 0.0;
      size_t worst = 0;
      for (float r : h_ref[i]) scale = std::max(scale, std::fabs(static_cast<double>(r)));
      for (size_t j = 0; j < h_out[i].size(); ++j) {
        const float o = h_out[i][j], r = h_ref[i][j];  // NaN on either side (poison left) fails
        const double e = fill.nan_matches_nan && std::isnan(o) && std::isnan(r) ? 0.0
                         : std::isnan(o) || std::isnan(r)                       ? INFINITY
                                                          : std::fabs(static_cast<double>(o) - r);
        if (e > err) err = e, worst = j;
      }
      EXPECT_LE(err / scale, tol) << "output " << i << " of "
                                  << dlrt::plugin::dims_string(view.output(i).dims) << ": element "
                                  << worst << " is " << h_out[i][worst] << ", reference "
                                  << h_ref[i][worst];
    }
    if (outputs != nullptr) *outputs = h_out;
  }
  for (void* p : d_in) c.api().mem_free(c.dev, p);
  for (void* p : d_out) c.api().mem_free(c.dev, p);
  if (ws != nullptr) c.api().mem_free(c.dev, ws);
  c.api().kernel_destroy(kernel);
}

// op_supported's answer for an instance the plugin must refuse.
void expect_refused(const dlrt_op_desc& desc, dlrt_code code, const std::string& op,
                    const std::string& part = "") {
  Cpu& c = cpu();
  ASSERT_NE(c.inst, nullptr) << c.lib.error();
  auto [got, msg] = take_status(c.api().op_supported(c.inst, 0, &desc, nullptr));
  EXPECT_EQ(got, code) << msg;
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  dlrt_kernel* k = nullptr;
  size_t ws = 0;
  auto [got2, msg2] = take_status(c.api().kernel_create(c.dev, &desc, &k, &ws));
  EXPECT_EQ(got2, code) << msg2;
  EXPECT_EQ(k, nullptr);
}

// An f16 instance of a row whose primitive is f32: the plugin runs it between conversions
// (widening_kernel.hpp; docs/ops.md "16-bit floats"), so it is accepted, and its kernel asks
// for a workspace that holds at least the f32 copies of its operands. (The numbers are the
// conformance suite's: its f16/bf16 cases against the reference.)
void expect_f16_converted(const std::string& op, const std::vector<TensorType>& inputs,
                          const AttrMap& attrs = {}) {
  Cpu& c = cpu();
  ASSERT_NE(c.inst, nullptr) << c.lib.error();
  const dlrt::ops::OpInstance in = instance(op, inputs, attrs);
  auto [got, msg] = take_status(c.api().op_supported(c.inst, 0, &in.desc(), nullptr));
  EXPECT_EQ(got, DLRT_OK) << op << ": " << msg;
  dlrt_kernel* k = nullptr;
  size_t ws = 0;
  auto [got2, msg2] = take_status(c.api().kernel_create(c.dev, &in.desc(), &k, &ws));
  ASSERT_EQ(got2, DLRT_OK) << op << ": " << msg2;
  size_t wide = 0;
  for (const TensorType& t : in.inputs()) wide += t.num_elements() * sizeof(float);
  for (const TensorType& t : in.outputs()) wide += t.num_elements() * sizeof(float);
  EXPECT_GE(ws, wide) << op;
  c.api().kernel_destroy(k);
}

// The instance's descriptor without its "pads" attribute, as a host older than ABI 1.2 sends.
struct WithoutPads {
  explicit WithoutPads(const dlrt_op_desc& d) : desc(d) {
    for (size_t i = 0; i < d.num_attrs; ++i)
      if (std::string(d.attrs[i]->name) != "pads") attrs.push_back(d.attrs[i]);
    desc.attrs = attrs.data();
    desc.num_attrs = attrs.size();
  }
  dlrt_op_desc desc;
  std::vector<const dlrt_attr*> attrs;
};

Dims out_dims(const std::string& op, const std::vector<TensorType>& inputs, const AttrMap& attrs) {
  return instance(op, inputs, attrs).output(0).dims;
}

// ---- convolution -------------------------------------------------------------------------

struct ConvCase {
  Dims x, w;
  AttrMap attrs;
};

std::vector<ConvCase> conv_cases() {
  return {
      {{1, 5, 5, 3}, {3, 3, 3, 4}, {}},
      {{2, 7, 6, 5}, {3, 3, 5, 7}, {{"padding", "SAME"}, {"strides", {2, 2}}}},
      {{2, 8, 8, 1}, {3, 3, 1, 32}, {}},  // the MNIST CNN's first layer (Ci = 1)
      {{2, 9, 7, 3}, {2, 3, 3, 10}, {{"padding", "SAME"}, {"dilations", {2, 1}}}},
      {{1, 6, 9, 4}, {1, 1, 4, 3}, {{"padding", "VALID"}, {"strides", {2, 2}}}},
      {{2, 10, 10, 16}, {3, 3, 16, 24}, {{"padding", "SAME"}}},
      // Backward filter as im2col + matmul (NHWC, Ci >= 8): the second layer; stride, dilation
      // along h and SAME padding; more images than one ~2 MiB chunk of rows (chunks 6 + 5).
      {{2, 13, 13, 32}, {3, 3, 32, 64}, {}},
      {{2, 9, 8, 8},
       {3, 2, 8, 5},
       {{"padding", "SAME"}, {"strides", {2, 1}}, {"dilations", {2, 1}}}},
      {{11, 24, 24, 16}, {3, 3, 16, 8}, {}},
      {{1, 16, 10, 10}, {3, 3, 16, 8}, {{"data_format", "NCHW"}, {"padding", "SAME"}}},
      {{2, 3, 6, 7},
       {3, 3, 3, 5},
       {{"data_format", "NCHW"}, {"padding", "SAME"}, {"strides", {2, 1}}}},
      {{1, 4, 7, 6}, {2, 2, 4, 9}, {{"data_format", "NCHW"}, {"strides", {2, 2}}}},
      // Grouped (w (KH,KW,Ci/G,Co)) and depthwise (G = Ci): oneDNN with 5-D hwigo weights. The
      // first two have the shapes that take Winograd and im2col + matmul without groups.
      {{2, 10, 10, 32}, {3, 3, 16, 32}, {{"padding", "SAME"}, {"groups", 2}}},
      {{2, 13, 13, 32}, {3, 3, 8, 64}, {{"groups", 4}}},
      {{2, 9, 9, 16}, {3, 3, 1, 16}, {{"padding", "SAME"}, {"groups", 16}}},  // depthwise
      {{1, 8, 7, 3}, {3, 3, 1, 6}, {{"strides", {2, 1}}, {"groups", 3}}},     // multiplier 2
      {{2, 6, 9, 8},
       {3, 3, 1, 6},
       {{"data_format", "NCHW"}, {"padding", "SAME"}, {"dilations", {2, 2}}, {"groups", 6}}},
      {{1, 6, 7, 7}, {2, 2, 3, 4}, {{"data_format", "NCHW"}, {"groups", 2}}},
      // Grouped 1x1 at stride 1 (ShuffleNet's): one matmul per group on strided views
      // (conv_grouped_pointwise.cc): 6 -> 7 channels a group, 3 -> 2, 1 -> 2 (a multiplier);
      // at stride 2 oneDNN's kernel again.
      {{2, 7, 5, 24}, {1, 1, 6, 28}, {{"groups", 4}}},
      {{2, 3, 3, 9}, {1, 1, 3, 6}, {{"groups", 3}, {"padding", "SAME"}}},
      {{1, 4, 4, 6}, {1, 1, 1, 12}, {{"groups", 6}}},
      {{1, 6, 6, 8}, {1, 1, 4, 8}, {{"groups", 2}, {"strides", {2, 2}}}},
  };
}

TEST(PrimitiveKernels, Conv2d) {
  for (const auto& c : conv_cases()) check_op("conv2d", {f32(c.x), f32(c.w)}, c.attrs, kConvTol);
}

TEST(PrimitiveKernels, Conv2dBiasAct) {
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  int i = 0;
  for (const auto& c : conv_cases()) {
    AttrMap attrs = c.attrs;
    attrs["activation"] = acts[i++ % 4];
    check_op("conv2d_bias_act", {f32(c.x), f32(c.w), f32({c.w[3]})}, attrs, kConvTol);
  }
}

TEST(PrimitiveKernels, Conv2dBackwardData) {
  for (const auto& c : conv_cases()) {
    AttrMap attrs = c.attrs;
    attrs["input_shape"] = dlrt::ops::Ints(c.x.begin(), c.x.end());
    check_op("conv2d_backward_data",
             {f32(out_dims("conv2d", {f32(c.x), f32(c.w)}, c.attrs)), f32(c.w)}, attrs, kConvTol);
  }
}

TEST(PrimitiveKernels, Conv2dBackwardFilter) {
  for (const auto& c : conv_cases()) {
    AttrMap attrs = c.attrs;
    attrs["filter_shape"] = dlrt::ops::Ints(c.w.begin(), c.w.end());
    check_op("conv2d_backward_filter",
             {f32(c.x), f32(out_dims("conv2d", {f32(c.x), f32(c.w)}, c.attrs))}, attrs, kConvTol);
  }
}

TEST(PrimitiveKernels, ConvRefusals) {
  expect_f16_converted("conv2d", {f16({1, 5, 5, 3}), f16({3, 3, 3, 4})});
  expect_f16_converted("conv2d_backward_filter", {f16({1, 5, 5, 3}), f16({1, 3, 3, 4})},
                       {{"filter_shape", {3, 3, 3, 4}}});
  // Shapes are the schema's to check (docs/design.md, "What a plugin may trust"); what the
  // plugin refuses is a descriptor it cannot run as given: no explicit pads (a pre-1.2 host).
  const auto in = instance("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})}, {});
  WithoutPads old(in.desc());
  expect_refused(old.desc, DLRT_UNIMPLEMENTED, "conv2d", "pads");
}

// The `threads` option: one thread, and more threads than cores (oneDNN sizes the
// scratchpad of backward filter's reduction across threads for the count in force at create).
TEST(PrimitiveKernels, ThreadsOption) {
  for (int threads : {1, 5}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    const Dims x = {8, 12, 12, 16}, w = {3, 3, 16, 24};
    check_op("conv2d_backward_filter", {f32(x), f32(out_dims("conv2d", {f32(x), f32(w)}, {}))},
             {{"filter_shape", {3, 3, 16, 24}}}, kConvTol, {}, cpu_with_threads(threads));
    check_op("conv2d_bias_act", {f32(x), f32(w), f32({24})}, {{"activation", "relu"}}, kConvTol, {},
             cpu_with_threads(threads));
    check_op("matmul", {f32({64, 576}), f32({576, 64})}, {}, kConvTol, {},
             cpu_with_threads(threads));
  }
}

// Winograd F(4x4, 3x3) (kernels/winograd_kernel.inc): 3x3 stride-1 NHWC convolutions with
// channel counts in multiples of 16, on AVX2+FMA CPUs, unless the `winograd` option is 0: the
// AVX-512 build where oneDNN runs AVX-512, the AVX2 build under cpu_conv_kernels_avx2
// (ONEDNN_MAX_CPU_ISA=AVX2) and on AVX2 CPUs. The channel counts cover both builds' column
// blocks (16 = one 16-lane vector, 48 = 32 + 16) and their row tails (backward filter's rows
// are ci: 16 = 12 + 4 on AVX-512).
// Every pass against the reference at a tighter tolerance than the conv default, with one
// thread, two, and more threads than images; odd sizes (partial last tiles), SAME padding
// (tiles that start in the padding), a 3x3 output (one tile), 48 output channels (three
// 16-column blocks). With the option off, the same inputs go through oneDNN's direct kernels:
// both match the reference, and on a CPU that takes the Winograd path the bits differ, which
// shows the path really ran. Whether it can run here is the device attribute `winograd`
// (1: option on and an AVX2+FMA CPU that oneDNN's ISA cap allows). conv2d_backward_data_add
// (dx started from an addend) runs each way too: Winograd's pass copies the addend where it
// zeroed dx, oneDNN's adds it in a binary step after its pass; and conv2d_backward (dx and
// dw of one sweep that transforms dy once, or oneDNN's two passes one after the other).
TEST(PrimitiveKernels, WinogradConv) {
  constexpr double kWinogradTol = 1e-4;
  const std::optional<int64_t> attr = int_attr(cpu(), "winograd");
  ASSERT_TRUE(attr.has_value()) << "the cpu device has no attribute 'winograd'";
  const bool winograd_cpu = *attr == 1;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      std::getenv("ONEDNN_MAX_CPU_ISA") == nullptr)
    EXPECT_TRUE(winograd_cpu) << "an AVX2+FMA CPU, yet the device says winograd = 0";
  EXPECT_EQ(int_attr(cpu_with({{"winograd", "0"}}), "winograd"), 0)
      << "option winograd=0 not in force";
  const std::vector<ConvCase> cases = {
      // Batches large enough for Winograd to pay for its filter transform (worth_it).
      {{2, 13, 13, 32}, {3, 3, 32, 64}, {}},  // the MNIST CNN's middle layer, two images
      {{8, 6, 6, 16}, {3, 3, 16, 16}, {{"padding", "SAME"}}},
      {{4, 9, 7, 16}, {3, 3, 16, 32}, {{"padding", "SAME"}}},
      {{32, 5, 5, 64}, {3, 3, 64, 64}, {}},  // the last layer: a 3x3 output, one tile
      {{5, 10, 11, 16}, {3, 3, 16, 48}, {}},
      {{1, 13, 13, 32}, {3, 3, 32, 64}, {}},  // batch 1: nine tiles split over the threads
  };
  // winograd=2: the path wherever it can run, so every pass is checked whatever the cost
  // rule (wino::worth_it) would pick on this CPU.
  const std::map<std::string, std::string> forced = {{"winograd", "2"}};
  const std::map<std::string, std::string> on_1 = {{"winograd", "2"}, {"threads", "1"}},
                                           on_5 = {{"winograd", "2"}, {"threads", "5"}};
  const std::map<std::string, std::string> off = {{"winograd", "0"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(dlrt::plugin::dims_string(c.x) + " * " + dlrt::plugin::dims_string(c.w));
    const Dims y = out_dims("conv2d", {f32(c.x), f32(c.w)}, c.attrs);
    AttrMap relu = c.attrs, bias_only = c.attrs, data = c.attrs, filter = c.attrs;
    relu["activation"] = "relu";
    bias_only["activation"] = "none";
    data["input_shape"] = dlrt::ops::Ints(c.x.begin(), c.x.end());
    filter["filter_shape"] = dlrt::ops::Ints(c.w.begin(), c.w.end());
    struct Pass {
      std::string op;
      std::vector<TensorType> inputs;
      AttrMap attrs;
    };
    const std::vector<Pass> passes = {
        {"conv2d", {f32(c.x), f32(c.w)}, c.attrs},
        {"conv2d_bias_act", {f32(c.x), f32(c.w), f32({c.w[3]})}, relu},
        {"conv2d_bias_act", {f32(c.x), f32(c.w), f32({c.w[3]})}, bias_only},
        {"conv2d_backward_data", {f32(y), f32(c.w)}, data},
        {"conv2d_backward_data_add", {f32(y), f32(c.w), f32(c.x)}, data},
        {"conv2d_backward", {f32(y), f32(c.x), f32(c.w)}, c.attrs},
        {"conv2d_backward_filter", {f32(c.x), f32(y)}, filter},
    };
    for (const Pass& pass : passes) {
      std::vector<std::vector<float>> winograd, direct;
      check_op(pass.op, pass.inputs, pass.attrs, kWinogradTol, {}, cpu_with(forced), &winograd);
      check_op(pass.op, pass.inputs, pass.attrs, kWinogradTol, {}, cpu_with(on_1));
      check_op(pass.op, pass.inputs, pass.attrs, kWinogradTol, {}, cpu_with(on_5));
      check_op(pass.op, pass.inputs, pass.attrs, kConvTol, {}, cpu_with(off), &direct);
      if (pass.op == "conv2d" || pass.op == "conv2d_bias_act") {
        // The filter marked constant: the forward pass keeps U from its first run; the
        // second run (a new image, the same filter) reads the kept U.
        for (const auto* options : {&forced, &on_1, &on_5})
          check_op(pass.op, pass.inputs, pass.attrs, kWinogradTol, {}, cpu_with(*options), nullptr,
                   /*constant_inputs=*/2u);
      }
      ASSERT_FALSE(winograd.empty());
      ASSERT_FALSE(direct.empty());
      if (winograd_cpu)
        EXPECT_NE(winograd[0], direct[0]) << pass.op << ": the Winograd path did not run";
      else EXPECT_EQ(winograd[0], direct[0]) << pass.op << ": no AVX2+FMA, yet not oneDNN's result";
    }
  }
}

// Runs an instance once on `c` with these input bytes: its output bytes, and op_supported's
// cost of it.
struct RawRun {
  std::vector<std::vector<uint8_t>> outputs;
  dlrt_op_cost cost{};
};
RawRun run_raw(Cpu& c, const dlrt::ops::OpInstance& in,
               const std::vector<std::vector<uint8_t>>& inputs) {
  RawRun r;
  const dlrt_op_desc& desc = in.desc();
  const dlrt::plugin::OpView view(&desc);
  r.cost.struct_size = sizeof(r.cost);
  EXPECT_OK(c.api().op_supported(c.inst, 0, &desc, &r.cost));
  dlrt_kernel* kernel = nullptr;
  size_t ws_bytes = 0;
  EXPECT_OK(c.api().kernel_create(c.dev, &desc, &kernel, &ws_bytes));
  if (kernel == nullptr) return r;
  std::vector<void*> d_in(view.num_inputs()), d_out(view.num_outputs());
  void* ws = nullptr;
  for (size_t i = 0; i < d_in.size(); ++i) {
    EXPECT_OK(c.api().mem_alloc(c.dev, view.input(i).bytes, 64, &d_in[i]));
    EXPECT_OK(c.api().memcpy_h2d(c.dev, d_in[i], inputs[i].data(), view.input(i).bytes, nullptr));
  }
  for (size_t i = 0; i < d_out.size(); ++i)
    EXPECT_OK(c.api().mem_alloc(c.dev, view.output(i).bytes, 64, &d_out[i]));
  if (ws_bytes > 0) EXPECT_OK(c.api().mem_alloc(c.dev, ws_bytes, 64, &ws));
  dlrt_kernel_args args{};
  args.struct_size = sizeof(args);
  args.num_inputs = d_in.size();
  args.inputs = const_cast<const void* const*>(d_in.data());
  args.num_outputs = d_out.size();
  args.outputs = d_out.data();
  args.workspace = ws;
  args.workspace_bytes = ws_bytes;
  EXPECT_OK(c.api().kernel_run(kernel, c.stream, &args));
  EXPECT_OK(c.api().stream_synchronize(c.stream));
  for (size_t i = 0; i < d_out.size(); ++i) {
    r.outputs.emplace_back(view.output(i).bytes);
    EXPECT_OK(
        c.api().memcpy_d2h(c.dev, r.outputs[i].data(), d_out[i], view.output(i).bytes, nullptr));
  }
  for (void* p : d_in) c.api().mem_free(c.dev, p);
  for (void* p : d_out) c.api().mem_free(c.dev, p);
  if (ws != nullptr) c.api().mem_free(c.dev, ws);
  c.api().kernel_destroy(kernel);
  return r;
}

// Mixed precision's 3x3 convolutions: dlrt's Winograd kernel runs bf16 operands, and f16 ones
// (with F16C), on their 16-bit storage (images widened as the tiles read them, rounded as they
// are written, dx summed in f32 first), so every pass gives the f32 kernel's outputs on the
// widened inputs rounded once, bit for bit, and op_supported accepts it natively (its cost's
// bytes are the operands' own, with no conversion passes: ops.cc adds three per 16-bit
// operand). Every pass, one, two and five threads, full blocks of 16/32/64 channels and the
// run-time channel path (48), partial tiles, SAME padding, the addend of
// conv2d_backward_data_add; a few NaN and infinite inputs, whose outputs must be NaN/infinite
// alike. Without the Winograd path (an ISA cap below AVX2) the 16-bit op runs between
// conversions, with the same bits.
TEST(PrimitiveKernels, WinogradConvOn16BitStorageIsTheF32KernelRoundedOnce) {
  const std::optional<int64_t> attr = int_attr(cpu(), "winograd");
  ASSERT_TRUE(attr.has_value());
  const bool winograd_cpu = *attr == 1;
  for (const dlrt_dtype dtype : {DLRT_BF16, DLRT_F16}) {
    SCOPED_TRACE(dlrt::plugin::dtype_name(dtype));
    auto narrow_of = [dtype](Dims d) { return TensorType{dtype, std::move(d)}; };
    const std::vector<ConvCase> cases = {
        {{2, 13, 13, 32}, {3, 3, 32, 64}, {}},
        {{4, 9, 7, 16}, {3, 3, 16, 32}, {{"padding", "SAME"}}},
        {{32, 5, 5, 64}, {3, 3, 64, 64}, {}},
        {{5, 10, 11, 16}, {3, 3, 16, 48}, {}},
    };
    const std::vector<std::map<std::string, std::string>> options = {
        {{"winograd", "2"}},
        {{"winograd", "2"}, {"threads", "1"}},
        {{"winograd", "2"}, {"threads", "5"}}};
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const auto& c : cases) {
      SCOPED_TRACE(dlrt::plugin::dims_string(c.x) + " * " + dlrt::plugin::dims_string(c.w));
      const Dims y = out_dims("conv2d", {f32(c.x), f32(c.w)}, c.attrs);
      AttrMap relu = c.attrs, data = c.attrs, filter = c.attrs;
      relu["activation"] = "relu";
      data["input_shape"] = dlrt::ops::Ints(c.x.begin(), c.x.end());
      filter["filter_shape"] = dlrt::ops::Ints(c.w.begin(), c.w.end());
      struct Pass {
        std::string op;
        std::vector<Dims> inputs;
        AttrMap attrs;
      };
      const std::vector<Pass> passes = {
          {"conv2d", {c.x, c.w}, c.attrs},
          {"conv2d_bias_act", {c.x, c.w, {c.w[3]}}, relu},
          {"conv2d_backward_data", {y, c.w}, data},
          {"conv2d_backward_data_add", {y, c.w, c.x}, data},
          {"conv2d_backward", {y, c.x, c.w}, c.attrs},
          {"conv2d_backward_filter", {c.x, y}, filter},
      };
      for (const Pass& pass : passes) {
        SCOPED_TRACE(pass.op);
        std::vector<TensorType> narrow_types, wide_types;
        for (const Dims& d : pass.inputs)
          narrow_types.push_back(narrow_of(d)), wide_types.push_back(f32(d));
        const dlrt::ops::OpInstance narrow = instance(pass.op, narrow_types, pass.attrs);
        const dlrt::ops::OpInstance wide = instance(pass.op, wide_types, pass.attrs);
        std::vector<std::vector<uint8_t>> narrow_in, wide_in;
        for (const Dims& d : pass.inputs) {
          int64_t n = 1;
          for (int64_t v : d) n *= v;
          std::vector<uint16_t> h(static_cast<size_t>(n));
          std::vector<float> f(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i)
            f[i] = i % 997 == 5 ? NAN : i % 1009 == 7 ? INFINITY : u(rng);
          dlrt::plugin::float_to_narrow(dtype, f.data(), h.data(), static_cast<size_t>(n));
          dlrt::plugin::narrow_to_float(dtype, h.data(), f.data(), static_cast<size_t>(n));
          narrow_in.emplace_back(reinterpret_cast<uint8_t*>(h.data()),
                                 reinterpret_cast<uint8_t*>(h.data() + n));
          wide_in.emplace_back(reinterpret_cast<uint8_t*>(f.data()),
                               reinterpret_cast<uint8_t*>(f.data() + n));
        }
        for (const auto& o : options) {
          SCOPED_TRACE(o.size() > 1 ? "threads " + o.at("threads") : "default threads");
          Cpu& dev = cpu_with(o);
          const RawRun got = run_raw(dev, narrow, narrow_in);
          const RawRun want = run_raw(dev, wide, wide_in);
          ASSERT_EQ(got.outputs.size(), want.outputs.size());
          double operand_bytes = 0;
          for (const TensorType& t : narrow.inputs()) operand_bytes += 2.0 * t.num_elements();
          for (const TensorType& t : narrow.outputs()) operand_bytes += 2.0 * t.num_elements();
          if (winograd_cpu)
            EXPECT_EQ(got.cost.bytes, operand_bytes) << "not run on the 16-bit storage";
          for (size_t i = 0; i < got.outputs.size(); ++i) {
            const size_t n = got.outputs[i].size() / 2;
            const auto* g = reinterpret_cast<const uint16_t*>(got.outputs[i].data());
            const auto* w = reinterpret_cast<const float*>(want.outputs[i].data());
            std::vector<uint16_t> want_bits(n);
            dlrt::plugin::float_to_narrow(dtype, w, want_bits.data(), n);
            size_t bad = 0, first = n;
            // NaN against NaN: which NaN an operation returns depends on its operands' order,
            // which the compiler may swap in either build.
            const uint16_t inf = dtype == DLRT_BF16 ? 0x7f80 : 0x7c00;
            auto is_nan = [inf](uint16_t h) { return (h & 0x7fff) > inf; };
            for (size_t j = 0; j < n; ++j)
              if (g[j] != want_bits[j] && !(is_nan(g[j]) && is_nan(want_bits[j])))
                ++bad, first = std::min(first, j);
            EXPECT_EQ(bad, 0u) << "output " << i << ": " << bad << " of " << n
                               << " values differ, first at " << first << " (" << std::hex
                               << (first < n ? g[first] : 0) << " against f32 "
                               << (first < n ? w[first] : 0.0f) << std::dec << ")";
          }
        }
      }
    }
  }
}

// Convolutions of one-channel images (conv_one_channel.cc: the forward pass with no activation
// or relu, and the filter gradient) against the reference, on one, two and five threads: the
// reference CNN's conv1 at its batch, SAME borders, a 5x5 window at stride 2, dilation 2 (the
// compile-time 3x3 path takes the interior cells of unit-stride rows, the general loop the
// rest). In bf16 the same kernels give the f32 kernels' results on the widened inputs rounded
// once, bit for bit (same arithmetic, same order), and are accepted natively (op_supported's
// bytes carry no conversion passes). Under the ISA caps of cpu_conv_kernels_{avx2,portable}
// the AVX2 and baseline builds run the same checks.
TEST(PrimitiveKernels, OneChannelConv) {
  auto bf16 = [](Dims d) { return TensorType{DLRT_BF16, std::move(d)}; };
  const std::vector<ConvCase> cases = {
      {{64, 28, 28, 1}, {3, 3, 1, 32}, {}},
      {{3, 9, 7, 1}, {3, 3, 1, 16}, {{"padding", "SAME"}}},
      {{2, 11, 10, 1}, {5, 5, 1, 48}, {{"padding", "SAME"}, {"strides", {2, 2}}}},
      {{2, 12, 13, 1}, {3, 3, 1, 32}, {{"dilations", {2, 2}}}},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& c : cases) {
    SCOPED_TRACE(dlrt::plugin::dims_string(c.x) + " * " + dlrt::plugin::dims_string(c.w));
    const Dims y = out_dims("conv2d", {f32(c.x), f32(c.w)}, c.attrs);
    AttrMap relu = c.attrs, none = c.attrs, filter = c.attrs;
    relu["activation"] = "relu";
    none["activation"] = "none";
    filter["filter_shape"] = dlrt::ops::Ints(c.w.begin(), c.w.end());
    struct Pass {
      std::string op;
      std::vector<Dims> inputs;
      AttrMap attrs;
    };
    const std::vector<Pass> passes = {
        {"conv2d", {c.x, c.w}, c.attrs},
        {"conv2d_bias_act", {c.x, c.w, {c.w[3]}}, relu},
        {"conv2d_bias_act", {c.x, c.w, {c.w[3]}}, none},
        {"conv2d_backward_filter", {c.x, y}, filter},
    };
    for (const Pass& pass : passes) {
      SCOPED_TRACE(pass.op + (pass.attrs.count("activation")
                                  ? " " + dlrt::ops::to_string(pass.attrs.at("activation"))
                                  : ""));
      std::vector<TensorType> wide_types, narrow_types;
      for (const Dims& d : pass.inputs)
        wide_types.push_back(f32(d)), narrow_types.push_back(bf16(d));
      for (int threads : {1, 2, 5})
        check_op(pass.op, wide_types, pass.attrs, kConvTol, {}, cpu_with_threads(threads));
      const dlrt::ops::OpInstance narrow = instance(pass.op, narrow_types, pass.attrs);
      const dlrt::ops::OpInstance wide = instance(pass.op, wide_types, pass.attrs);
      std::vector<std::vector<uint8_t>> narrow_in, wide_in;
      for (const Dims& d : pass.inputs) {
        int64_t n = 1;
        for (int64_t v : d) n *= v;
        std::vector<uint16_t> h(static_cast<size_t>(n));
        std::vector<float> f(static_cast<size_t>(n));
        // Input 0's first image and the bias hold values around 1e-39 only (the outputs
        // there are subnormal, which the rounding must keep: on CPUs with AVX512-BF16 the
        // forward's vcvtne2ps2bf16 stores would flush them, so they take the integer
        // rounding), and a few NaNs lie elsewhere.
        const int64_t first_image = pass.inputs[0][1] * pass.inputs[0][2];
        const bool bias = &d == &pass.inputs.back() && pass.op == "conv2d_bias_act";
        for (int64_t i = 0; i < n; ++i) {
          const float v = i % 613 == 17                                        ? NAN
                          : (&d == &pass.inputs[0] && i < first_image) || bias ? u(rng) * 1e-39f
                                                                               : u(rng);
          h[i] = dlrt::plugin::float_to_bf16(v);
          f[i] = dlrt::plugin::bf16_to_float(h[i]);
        }
        narrow_in.emplace_back(reinterpret_cast<uint8_t*>(h.data()),
                               reinterpret_cast<uint8_t*>(h.data() + n));
        wide_in.emplace_back(reinterpret_cast<uint8_t*>(f.data()),
                             reinterpret_cast<uint8_t*>(f.data() + n));
      }
      for (int threads : {1, 2}) {
        Cpu& dev = cpu_with_threads(threads);
        const RawRun got = run_raw(dev, narrow, narrow_in);
        const RawRun want = run_raw(dev, wide, wide_in);
        ASSERT_EQ(got.outputs.size(), 1u);
        ASSERT_EQ(want.outputs.size(), 1u);
        double operand_bytes = 0;
        for (const TensorType& t : narrow.inputs()) operand_bytes += 2.0 * t.num_elements();
        operand_bytes += 2.0 * narrow.output(0).num_elements();
        EXPECT_EQ(got.cost.bytes, operand_bytes) << "bf16 not run natively";
        const size_t n = got.outputs[0].size() / 2;
        const auto* g = reinterpret_cast<const uint16_t*>(got.outputs[0].data());
        const auto* w = reinterpret_cast<const float*>(want.outputs[0].data());
        auto is_nan = [](uint16_t v) { return (v & 0x7fff) > 0x7f80; };
        size_t bad = 0, subnormal = 0;
        for (size_t j = 0; j < n; ++j) {
          const uint16_t want_bits = dlrt::plugin::float_to_bf16(w[j]);
          subnormal += (want_bits & 0x7f80) == 0 && (want_bits & 0x7f) != 0;
          bad += g[j] != want_bits && !(is_nan(g[j]) && is_nan(want_bits));
        }
        EXPECT_EQ(bad, 0u) << "bf16, threads " << threads << ": " << bad << " of " << n
                           << " values are not the f32 kernel's rounded";
        if (pass.op != "conv2d_backward_filter")  // the first image's outputs are subnormal
          EXPECT_GT(subnormal, 0u) << "no subnormal output: the case does not reach them";
      }
    }
  }
}

// oneDNN's own Winograd kernel (jit_wino_4x3, AVX-512 only; prim_conv.cc,
// onednn_winograd_applies) for forward 3x3 convolutions under the default option: against
// the reference at the Winograd tolerance, and with bits that differ from the direct kernel's
// (option winograd=0) exactly where the rule takes it: 32 MFLOP of direct work, outputs of
// 4x4 or more, and for a variable filter 16384 output cells across the batch (a constant
// one, an inference session's weights, is transformed once). The cases have more than
// 64 x 64 channel pairs, or too little work for any Winograd kernel, so that dlrt's own
// (which takes the forward pass up to 64 x 64 pairs here) does not run in their place. Activations its kernel may refuse (sigmoid) fall back to the direct kernel.
TEST(PrimitiveKernels, OneDnnWinogradForward) {
  const std::string isa = string_attr(cpu(), "isa").value_or("");
  if (isa.rfind("avx512", 0) != 0 || std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr)
    GTEST_SKIP() << "oneDNN runs " << isa << " here; its Winograd kernel needs AVX-512";
  constexpr double kWinogradTol = 1e-4;
  constexpr uint32_t kFilterConstant = 2u;  // bit 1: input 1, w
  const std::map<std::string, std::string> off = {{"winograd", "0"}};
  struct Case {
    Dims x, w;
    AttrMap attrs;
    uint32_t constant;
    bool winograd;
  };
  const std::vector<Case> cases = {
      {{1, 128, 128, 48}, {3, 3, 48, 96}, {{"padding", "SAME"}}, 0, true},  // 16384 cells
      {{4, 30, 30, 48}, {3, 3, 48, 96}, {}, 0, false},                      // 3136 cells
      {{4, 30, 30, 48}, {3, 3, 48, 96}, {}, kFilterConstant, true},
      {{1, 9, 9, 256}, {3, 3, 256, 256}, {}, kFilterConstant, true},  // 7x7 out, 58 MFLOP
      {{1, 7, 7, 64}, {3, 3, 64, 64}, {{"padding", "SAME"}}, kFilterConstant, false},  // 4 MFLOP
      {{64, 5, 5, 64}, {3, 3, 64, 80}, {}, kFilterConstant, false},  // 3x3 outputs
      {{2, 9, 11, 16}, {3, 3, 16, 64}, {}, kFilterConstant, false},  // 16 input channels
      {{2, 9, 9, 64}, {3, 3, 64, 64}, {{"strides", {2, 2}}}, kFilterConstant, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(dlrt::plugin::dims_string(c.x) + " * " + dlrt::plugin::dims_string(c.w) +
                 (c.constant ? " (w constant)" : ""));
    for (const char* act : {"", "relu", "none", "sigmoid"}) {
      const std::string op = *act ? "conv2d_bias_act" : "conv2d";
      std::vector<TensorType> in = {f32(c.x), f32(c.w)};
      AttrMap attrs = c.attrs;
      if (*act) {
        in.push_back(f32({c.w[3]}));
        attrs["activation"] = act;
      }
      std::vector<std::vector<float>> on, direct;
      check_op(op, in, attrs, kWinogradTol, {}, cpu(), &on, c.constant);
      check_op(op, in, attrs, kConvTol, {}, cpu_with(off), &direct, c.constant);
      ASSERT_FALSE(on.empty() || direct.empty());
      if (std::string(act) == "sigmoid") continue;  // either kernel: oneDNN decides
      EXPECT_EQ(on[0] != direct[0], c.winograd) << op << " " << act;
    }
  }
}

// dlrt_op_desc.constant_inputs (ABI 1.3): a conv whose filter the host marks constant
// prepares it on the first run only: oneDNN's kernels reorder it into their layout, dlrt's
// Winograd kernel transforms it into U (on an AVX2+FMA CPU the batch-1 CNN layer below takes
// Winograd only because its filter is constant: wino::worth_it). Later runs with new images
// are right for that filter; a filter written afterwards (which a host that set the bit never
// does) is not seen, which shows the prepared filter was kept. Without the bit every run
// reads w.
TEST(PrimitiveKernels, ConstantFilterIsPreparedOnce) {
  struct Case {
    Dims xd, wd;
    std::map<std::string, std::string> options;
  };
  const std::vector<Case> cases = {
      {{2, 9, 9, 16}, {3, 3, 16, 32}, {{"winograd", "0"}}},  // oneDNN's direct kernel
      {{1, 13, 13, 32}, {3, 3, 32, 64}, {}},                 // Winograd where the CPU has it
  };
  for (const Case& k : cases) {
    for (const bool constant : {true, false}) {
      Cpu& c = cpu_with(k.options);
      ASSERT_NE(c.stream, nullptr) << c.lib.error();
      const Dims& xd = k.xd;
      const Dims& wd = k.wd;
      const dlrt::ops::OpInstance in = instance("conv2d", {f32(xd), f32(wd)}, {});
      SCOPED_TRACE(dlrt::plugin::dims_string(xd) + (constant ? ": w constant" : ": w not marked"));
      dlrt_op_desc desc = in.desc();
      desc.constant_inputs = constant ? 2u : 0u;  // bit 1: input 1, w
      const dlrt::plugin::OpView view(&desc);
      ASSERT_EQ(view.input_is_constant(1), constant);
      dlrt_kernel* kernel = nullptr;
      size_t ws_bytes = 0;
      ASSERT_OK(c.api().kernel_create(c.dev, &desc, &kernel, &ws_bytes));
      void *x = nullptr, *w = nullptr, *y = nullptr, *ws = nullptr;
      ASSERT_OK(c.api().mem_alloc(c.dev, view.input(0).bytes, 64, &x));
      ASSERT_OK(c.api().mem_alloc(c.dev, view.input(1).bytes, 64, &w));
      ASSERT_OK(c.api().mem_alloc(c.dev, view.output(0).bytes, 64, &y));
      if (ws_bytes > 0) ASSERT_OK(c.api().mem_alloc(c.dev, ws_bytes, 64, &ws));
      std::mt19937 rng(7);
      const std::vector<float> w1 = random_values(view.input(1).numel, {}, rng),
                               w2 = random_values(view.input(1).numel, {}, rng);
      // Runs once with image `hx` and, in w's buffer, `hw`; returns y, and in *want the
      // reference's y for `hx` with `ref_w`.
      auto run = [&](const std::vector<float>& hx, const std::vector<float>& hw,
                     const std::vector<float>& ref_w, std::vector<float>* want) {
        EXPECT_OK(c.api().memcpy_h2d(c.dev, x, hx.data(), view.input(0).bytes, nullptr));
        EXPECT_OK(c.api().memcpy_h2d(c.dev, w, hw.data(), view.input(1).bytes, nullptr));
        const void* ins[] = {x, w};
        void* outs[] = {y};
        dlrt_kernel_args args{};
        args.struct_size = sizeof(args);
        args.num_inputs = 2;
        args.inputs = ins;
        args.num_outputs = 1;
        args.outputs = outs;
        args.workspace = ws;
        args.workspace_bytes = ws_bytes;
        EXPECT_OK(c.api().kernel_run(kernel, c.stream, &args));
        EXPECT_OK(c.api().stream_synchronize(c.stream));
        std::vector<float> got(static_cast<size_t>(view.output(0).numel));
        EXPECT_OK(c.api().memcpy_d2h(c.dev, got.data(), y, view.output(0).bytes, nullptr));
        want->assign(got.size(), 0.0f);
        const void* ref_in[] = {hx.data(), ref_w.data()};
        void* ref_out[] = {want->data()};
        dlrt::reference::run(view, ref_in, ref_out, 0);
        return got;
      };
      auto max_diff = [](const std::vector<float>& a, const std::vector<float>& b) {
        double m = 0;
        for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
        return m;
      };
      std::vector<float> want;
      const std::vector<float> x1 = random_values(view.input(0).numel, {}, rng),
                               x2 = random_values(view.input(0).numel, {}, rng);
      std::vector<float> got = run(x1, w1, w1, &want);
      EXPECT_LE(max_diff(got, want), 1e-4) << "first run";
      got = run(x2, w1, w1, &want);
      EXPECT_LE(max_diff(got, want), 1e-4) << "a new image, the same filter";
      got = run(x2, w2, constant ? w1 : w2, &want);
      EXPECT_LE(max_diff(got, want), 1e-4)
          << (constant ? "the constant filter was read again" : "a changed filter was not read");
      c.api().kernel_destroy(kernel);
      for (void* p : {x, w, y, ws})
        if (p != nullptr) c.api().mem_free(c.dev, p);
    }
  }
}

// Where the default option (winograd=1) takes the path (wino::worth_it): the same inputs with
// the option on and off give the same bits exactly where it stays direct.
TEST(PrimitiveKernels, WinogradCostRule) {
  const std::optional<int64_t> attr = int_attr(cpu(), "winograd");
  ASSERT_TRUE(attr.has_value());
  if (*attr != 1)
    GTEST_SKIP() << "this CPU does not run the Winograd path (attribute winograd = 0)";
  const std::string isa = string_attr(cpu(), "isa").value_or("");
  const bool avx512 = isa.rfind("avx512", 0) == 0;
  const std::map<std::string, std::string> off = {{"winograd", "0"}};
  auto takes_winograd = [&](const std::string& op, const std::vector<TensorType>& in,
                            const AttrMap& attrs, uint32_t constant_inputs = 0) {
    std::vector<std::vector<float>> on, direct;
    check_op(op, in, attrs, kConvTol, {}, cpu(), &on, constant_inputs);
    check_op(op, in, attrs, kConvTol, {}, cpu_with(off), &direct, constant_inputs);
    EXPECT_FALSE(on.empty() || direct.empty());
    return !on.empty() && !direct.empty() && on[0] != direct[0];
  };
  const Dims x = {64, 13, 13, 32}, w = {3, 3, 32, 64}, y = {64, 11, 11, 64};
  AttrMap data, filter;
  data["input_shape"] = dlrt::ops::Ints(x.begin(), x.end());
  filter["filter_shape"] = dlrt::ops::Ints(w.begin(), w.end());
  // One image of the middle layer: too few tiles to pay for the filter transform, unless the
  // filter is a constant (an inference session's), whose transform is kept from the first run.
  EXPECT_FALSE(takes_winograd("conv2d", {f32({1, 13, 13, 32}), f32(w)}, {}))
      << "batch 1 at 11x11 took the Winograd path";
  EXPECT_TRUE(takes_winograd("conv2d", {f32({1, 13, 13, 32}), f32(w)}, {}, 2u))
      << "batch 1 at 11x11 with a constant filter stayed direct";
  // One image of the last layer (a 3x3 output: one tile) stays direct even so: reading U (four
  // times the filter) for one tile costs more than the direct kernel's products.
  EXPECT_FALSE(takes_winograd("conv2d", {f32({1, 5, 5, 64}), f32({3, 3, 64, 64})}, {}, 2u))
      << "one tile with a constant filter took the Winograd path";
  // The training batch: every pass, on AVX2 CPUs (the AVX2 build) and AVX-512 ones (the
  // AVX-512 build, which beats oneDNN's 16-lane direct kernels too).
  EXPECT_TRUE(takes_winograd("conv2d", {f32(x), f32(w)}, {})) << isa;
  EXPECT_TRUE(takes_winograd("conv2d_backward_filter", {f32(x), f32(y)}, filter)) << isa;
  EXPECT_TRUE(takes_winograd("conv2d_backward_data", {f32(y), f32(w)}, data)) << isa;
  // A 3x3 output is one tile per image, still enough images to pay.
  const Dims x3 = {64, 5, 5, 64}, w3 = {3, 3, 64, 64}, y3 = {64, 3, 3, 64};
  AttrMap data3;
  data3["input_shape"] = dlrt::ops::Ints(x3.begin(), x3.end());
  EXPECT_TRUE(takes_winograd("conv2d_backward_data", {f32(y3), f32(w3)}, data3)) << isa;
  // Past 64 x 64 channel pairs the forward pass on AVX-512 is not dlrt's (oneDNN's Winograd
  // where it applies, else direct: here direct, a variable filter over too few cells for
  // oneDNN's); backward passes stay dlrt's, and on AVX2 every pass is.
  const Dims xw = {8, 8, 8, 128}, ww = {3, 3, 128, 128}, yw = {8, 6, 6, 128};
  AttrMap dataw, filterw;
  dataw["input_shape"] = dlrt::ops::Ints(xw.begin(), xw.end());
  filterw["filter_shape"] = dlrt::ops::Ints(ww.begin(), ww.end());
  EXPECT_EQ(takes_winograd("conv2d", {f32(xw), f32(ww)}, {}), !avx512) << isa;
  EXPECT_TRUE(takes_winograd("conv2d_backward_filter", {f32(xw), f32(yw)}, filterw)) << isa;
  EXPECT_TRUE(takes_winograd("conv2d_backward_data", {f32(yw), f32(ww)}, dataw)) << isa;
}

// The calibration's verdicts decide which kernel runs (kernel_choices.hpp). A cache entry,
// written here, says oneDNN's direct kernel won the forward and backward-filter passes at few
// channel pairs and lost everything else: a 16 -> 16 forward convolution then gives
// winograd=0's bits exactly, a 64 -> 64 one and a 16 -> 16 backward-data pass Winograd's (bits
// that differ), and conv2d_backward at 16 -> 16, whose shared sweep needs both verdicts, runs
// its two passes apart: dx by Winograd, dw by oneDNN.
TEST(PrimitiveKernels, CalibratedChoicesDecide) {
  if (int_attr(cpu(), "winograd") != 1)
    GTEST_SKIP() << "this CPU does not run dlrt's Winograd (attribute winograd = 0): no choice";
  char folder[] = "/tmp/dlrt-choices-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_CACHE_HOME", folder, 1);
  const std::map<std::string, std::string> skip = {{"threads", "1"}, {"peak", "nominal"}};
  const std::optional<std::string> key = string_attr(cpu_with(skip), "calibration_key");
  ASSERT_TRUE(key.has_value());
  auto times = [](bool dlrt_wins) {
    return std::string(dlrt_wins ? R"({"dlrt_winograd_us": 100, "onednn_direct_us": 900})"
                                 : R"({"dlrt_winograd_us": 900, "onednn_direct_us": 100})");
  };
  auto pass = [&](bool few, bool many) {
    return "{\"few\": " + times(few) + ", \"many\": " + times(many) + "}";
  };
  std::filesystem::create_directories(std::string(folder) + "/dlrt");
  std::ofstream(std::string(folder) + "/dlrt/cpu-kernel-choices.json")
      << "{\"format\": 1, \"entries\": {\"" << *key
      << "\": {\"measured_at\": \"by the test\", \"conv3x3\": {\"forward\": " << pass(false, true)
      << ", \"backward_data\": " << pass(true, true)
      << ", \"backward_filter\": " << pass(false, true) << "}}}}";
  Cpu& chosen = cpu_with({{"threads", "1"}, {"peak", "nominal"}, {"calibrate", "auto"}});
  if (old != nullptr) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(folder);
  const std::string how = string_attr(chosen, "calibration").value_or("");
  ASSERT_NE(how.find("from the cache"), std::string::npos) << how;
  const std::string choices = string_attr(chosen, "kernel_choices").value_or("");
  EXPECT_NE(choices.find("conv3x3 forward, <= 1024 channel pairs: oneDNN direct"),
            std::string::npos)
      << choices;

  const std::map<std::string, std::string> off = {{"winograd", "0"}, {"threads", "1"}};
  // Which of the outputs have oneDNN's direct bits.
  auto direct_bits = [&](const std::string& op, const std::vector<TensorType>& in,
                         const AttrMap& attrs) {
    std::vector<std::vector<float>> got, direct;
    check_op(op, in, attrs, kConvTol, {}, chosen, &got);
    check_op(op, in, attrs, kConvTol, {}, cpu_with(off), &direct);
    std::vector<bool> same;
    for (size_t k = 0; k < got.size() && k < direct.size(); ++k) same.push_back(got[k] == direct[k]);
    return same;
  };
  const AttrMap same_pad = {{"padding", "SAME"}};
  const Dims x = {8, 12, 12, 16}, w = {3, 3, 16, 16};
  AttrMap data = same_pad, filter = same_pad;
  data["input_shape"] = dlrt::ops::Ints(x.begin(), x.end());
  filter["filter_shape"] = dlrt::ops::Ints(w.begin(), w.end());
  EXPECT_EQ(direct_bits("conv2d", {f32(x), f32(w)}, same_pad), std::vector<bool>{true})
      << "forward, 256 channel pairs: the cache says oneDNN";
  EXPECT_EQ(direct_bits("conv2d", {f32({8, 8, 8, 64}), f32({3, 3, 64, 64})}, same_pad),
            std::vector<bool>{false})
      << "forward, 4096 channel pairs: the cache says dlrt's Winograd";
  EXPECT_EQ(direct_bits("conv2d_backward_data", {f32(x), f32(w)}, data), std::vector<bool>{false})
      << "backward data, 256 pairs: the cache says dlrt's Winograd";
  EXPECT_EQ(direct_bits("conv2d_backward_filter", {f32(x), f32(x)}, filter),
            std::vector<bool>{true})
      << "backward filter, 256 pairs: the cache says oneDNN";
  EXPECT_EQ(direct_bits("conv2d_backward", {f32(x), f32(x), f32(w)}, same_pad),
            (std::vector<bool>{false, true}))
      << "both gradients: dx by Winograd, dw by oneDNN";
}

// ---- pooling -----------------------------------------------------------------------------

struct PoolCase {
  Dims x;
  AttrMap attrs;
};

std::vector<PoolCase> pool_cases() {
  return {
      {{1, 5, 5, 3}, {}},
      {{2, 7, 6, 10}, {{"ksize", {3, 3}}, {"strides", {2, 2}}, {"padding", "SAME"}}},
      {{2, 6, 6, 32}, {}},
      {{1, 5, 7, 3}, {{"ksize", {2, 3}}, {"strides", {1, 2}}, {"padding", "SAME"}}},
      {{2, 3, 7, 5}, {{"data_format", "NCHW"}, {"strides", {1, 1}}, {"padding", "SAME"}}},
      {{1, 4, 9, 9}, {{"data_format", "NCHW"}, {"ksize", {3, 3}}, {"strides", {2, 2}}}},
  };
}

TEST(PrimitiveKernels, Pool2d) {
  for (const char* op : {"max_pool2d", "avg_pool2d"})
    for (const auto& c : pool_cases()) check_op(op, {f32(c.x)}, c.attrs, kElemTol);
}

TEST(PrimitiveKernels, MaxPool2dBackward) {
  for (const auto& c : pool_cases())
    check_op("max_pool2d_backward", {f32(c.x), f32(out_dims("max_pool2d", {f32(c.x)}, c.attrs))},
             c.attrs, kElemTol);
}

TEST(PrimitiveKernels, MaxPool2dBackwardTiesGoToTheFirstMax) {
  Fill ties;
  ties.integers = true;  // x in {0, 1, 2}: most windows have several maxima
  for (const auto& c : pool_cases())
    check_op("max_pool2d_backward", {f32(c.x), f32(out_dims("max_pool2d", {f32(c.x)}, c.attrs))},
             c.attrs, kElemTol, ties);
}

// Forward: a window holding a NaN gives NaN, the others their maximum, on every path (the
// 2x2 loops, the vectorised general windows, NCHW).
TEST(PrimitiveKernels, MaxPool2dForwardNanIsTheMax) {
  Fill nans;
  nans.input0_nan_every = 7;
  nans.nan_matches_nan = true;
  for (const auto& c : pool_cases()) check_op("max_pool2d", {f32(c.x)}, c.attrs, kElemTol, nans);
}

// A NaN in x counts as the max of its window (the first NaN when there are several), as in
// the reference; dx stays finite, so the comparison sees where dy went.
TEST(PrimitiveKernels, MaxPool2dBackwardNanIsTheMax) {
  Fill nans;
  nans.input0_nan_every = 3;
  for (const auto& c : pool_cases())
    check_op("max_pool2d_backward", {f32(c.x), f32(out_dims("max_pool2d", {f32(c.x)}, c.attrs))},
             c.attrs, kElemTol, nans);
}

TEST(PrimitiveKernels, AvgPool2dBackward) {
  for (const auto& c : pool_cases()) {
    AttrMap attrs = c.attrs;
    attrs["input_shape"] = dlrt::ops::Ints(c.x.begin(), c.x.end());
    check_op("avg_pool2d_backward", {f32(out_dims("avg_pool2d", {f32(c.x)}, c.attrs))}, attrs,
             kElemTol);
  }
}

TEST(PrimitiveKernels, PoolRefusals) {
  expect_f16_converted("max_pool2d", {f16({1, 4, 4, 3})});
  expect_f16_converted("avg_pool2d_backward", {f16({1, 2, 2, 3})}, {{"input_shape", {1, 4, 4, 3}}});
  const auto in = instance("max_pool2d", {f32({1, 4, 4, 3})}, {});
  WithoutPads old(in.desc());
  expect_refused(old.desc, DLRT_UNIMPLEMENTED, "max_pool2d", "pads");
}

// ---- matmul ------------------------------------------------------------------------------

struct MatmulCase {
  int64_t m, k, n;
  bool ta, tb;
};

std::vector<MatmulCase> matmul_cases() {
  return {{1, 1, 1, false, false},   {3, 5, 7, false, false}, {3, 5, 7, true, false},
          {3, 5, 7, false, true},    {3, 5, 7, true, true},   {64, 576, 64, false, false},
          {64, 64, 10, true, false}, {17, 33, 9, false, true}};
}

std::vector<TensorType> matmul_inputs(const MatmulCase& c) {
  return {f32(c.ta ? Dims{c.k, c.m} : Dims{c.m, c.k}), f32(c.tb ? Dims{c.n, c.k} : Dims{c.k, c.n})};
}

TEST(PrimitiveKernels, Matmul) {
  for (const auto& c : matmul_cases())
    check_op("matmul", matmul_inputs(c), {{"transpose_a", c.ta}, {"transpose_b", c.tb}}, kConvTol);
}

TEST(PrimitiveKernels, MatmulBiasAct) {
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  int i = 0;
  for (const auto& c : matmul_cases()) {
    auto inputs = matmul_inputs(c);
    inputs.push_back(f32({c.n}));
    check_op("matmul_bias_act", inputs,
             {{"transpose_a", c.ta}, {"transpose_b", c.tb}, {"activation", acts[i++ % 4]}},
             kConvTol);
  }
}

TEST(PrimitiveKernels, MatmulF16RunsThroughF32) {
  expect_f16_converted("matmul", {f16({3, 5}), f16({5, 7})});
}

// ---- element-wise ------------------------------------------------------------------------

std::vector<Dims> eltwise_shapes() { return {{}, {1}, {7}, {2, 3, 5}, {2, 5, 5, 33}}; }

TEST(PrimitiveKernels, Activations) {
  const Fill wide{-5.0f, 5.0f};
  for (const char* op : {"relu", "sigmoid", "tanh"})
    for (const auto& d : eltwise_shapes()) check_op(op, {f32(d)}, {}, kElemTol, wide);
}

TEST(PrimitiveKernels, ActivationGradients) {
  for (const auto& d : eltwise_shapes()) {
    check_op("relu_grad", {f32(d), f32(d)}, {}, kElemTol);
    check_op("sigmoid_grad", {f32(d), f32(d)}, {}, kElemTol, Fill{0.0f, 1.0f});  // y in (0,1)
    check_op("tanh_grad", {f32(d), f32(d)}, {}, kElemTol);                       // y in (-1,1)
  }
}

TEST(PrimitiveKernels, BiasAdd) {
  check_op("bias_add", {f32({7}), f32({7})}, {}, kElemTol);
  check_op("bias_add", {f32({3, 10}), f32({10})}, {}, kElemTol);
  check_op("bias_add", {f32({2, 5, 5, 33}), f32({33})}, {}, kElemTol);
  check_op("bias_add", {f32({2, 33, 5, 3}), f32({33})}, {{"data_format", "NCHW"}}, kElemTol);
  check_op("bias_add", {f32({4, 6}), f32({6})}, {{"data_format", "NCHW"}}, kElemTol);
}

TEST(PrimitiveKernels, EltwiseF16RunsThroughF32) {
  expect_f16_converted("relu", {f16({2, 3})});
  expect_f16_converted("tanh_grad", {f16({2, 3}), f16({2, 3})});
  expect_f16_converted("bias_add", {f16({2, 3}), f16({3})});
}

// ---- softmax and reductions --------------------------------------------------------------

TEST(PrimitiveKernels, Softmax) {
  const Fill wide{-10.0f, 10.0f};
  for (const char* op : {"softmax", "log_softmax"}) {
    check_op(op, {f32({4, 10})}, {}, kReduceTol, wide);
    check_op(op, {f32({1, 1})}, {}, kReduceTol, wide);
    check_op(op, {f32({7})}, {}, kReduceTol, wide);
    check_op(op, {f32({2, 3, 5})}, {{"axis", 1}}, kReduceTol, wide);
    check_op(op, {f32({3, 4, 5})}, {{"axis", 0}}, kReduceTol, wide);
  }
}

TEST(PrimitiveKernels, Reductions) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    SCOPED_TRACE(op);
    check_op(op, {f32({3, 4, 5})}, {}, kReduceTol);
    check_op(op, {f32({3, 4, 5})}, {{"axes", {1}}, {"keepdims", true}}, kReduceTol);
    check_op(op, {f32({3, 4, 5})}, {{"axes", {0, 2}}}, kReduceTol);
    check_op(op, {f32({64, 10})}, {{"axes", {-1}}}, kReduceTol);
    check_op(op, {f32({1, 4})}, {{"axes", {0}}}, kReduceTol);  // nothing shrinks: a copy
    check_op(op, {f32({})}, {}, kReduceTol);                   // a scalar
    check_op(op, {f32({1000})}, {}, kReduceTol);
    // loop_reduce.cc's paths: rank 6 with alternating kept/reduced groups; large enough for
    // two threads with the outer dim kept (disjoint outputs) and reduced (private scratches).
    check_op(op, {f32({4, 9, 2, 9, 2, 33})}, {{"axes", {2, 4}}}, kReduceTol);
    check_op(op, {f32({8, 14, 2, 14, 2, 16})}, {{"axes", {2, 4}}}, kReduceTol);
    check_op(op, {f32({9000, 8})}, {{"axes", {0}}}, kReduceTol);
    check_op(op, {f32({40, 2000})}, {{"axes", {1}}}, kReduceTol);
    check_op(op, {f32({2, 3, 4, 5, 6, 7})}, {{"axes", {0, 3, 5}}, {"keepdims", true}}, kReduceTol);
  }
}

TEST(PrimitiveKernels, SoftmaxF16RunsThroughF32) { expect_f16_converted("softmax", {f16({2, 3})}); }

// ---- batch normalization -----------------------------------------------------------------

// x and its channel count: NHWC, NCHW (H*W folded), rank 2, batch 1, C not a multiple of 8,
// and one value per channel (zero batch variance). Every input in [0.5, 2): variances and
// saved inverse deviations positive, as the ops receive them.
struct NormCase {
  Dims x;
  int64_t c;
  const char* format;
};
const NormCase kNormCases[] = {{{2, 5, 7, 3}, 3, "NHWC"},   {{2, 3, 5, 7}, 3, "NCHW"},
                               {{1, 3, 5, 13}, 13, "NHWC"}, {{1, 11, 3, 3}, 11, "NCHW"},
                               {{6, 10}, 10, "NHWC"},       {{1, 1, 1, 5}, 5, "NHWC"}};

TEST(PrimitiveKernels, BatchNorm) {
  const Fill positive{0.5f, 2.0f};
  for (const NormCase& k : kNormCases) {
    const TensorType x = f32(k.x), c = f32({k.c});
    const AttrMap df = {{"data_format", k.format}};
    check_op("batch_norm", {x, c, c, c, c}, df, kReduceTol, positive);
    AttrMap train = df;
    train.emplace("momentum", 0.99);
    check_op("batch_norm_train", {x, c, c, c, c}, train, kReduceTol, positive);
    check_op("batch_norm_grad", {x, x, c, c, c}, df, kReduceTol, positive);
  }
}

TEST(PrimitiveKernels, BatchNormF16RunsThroughF32) {
  expect_f16_converted("batch_norm", {f16({2, 3}), f16({3}), f16({3}), f16({3}), f16({3})});
  expect_f16_converted("batch_norm_train",
                       {f16({2, 4, 4, 3}), f16({3}), f16({3}), f16({3}), f16({3})});
}

}  // namespace
