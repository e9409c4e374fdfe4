// kernel_math_test.cc: the per-element arithmetic and index math of the CUDA plugin's own
// kernels (kernel_math.hpp, op_support.cc's index builders), run on the host and compared
// with the reference kernels on the same inputs. No GPU and no CUDA runtime calls: what runs
// here is the exact source the .cu files run per element; only the launch differs.
//
// Each test builds its op through the core's registry (dlrt::ops::instantiate, so the
// descriptor is complete, as the plugin receives it), runs dlrt::reference::run, then
// replays the CUDA kernel's loop on the host with the kernel_math functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cut_join_geometry.hpp"
#include "kernel_math.hpp"
#include "ops/shape_util.hpp"
#include "op_support.hpp"
#include "ops/op_instance.hpp"
#include "reference_kernels.hpp"
#include "resize_geometry.hpp"

namespace dlrt::cuda {
namespace {

using ops::AttrMap;
using ops::TensorType;

ops::OpInstance make(const std::string& name, const std::vector<TensorType>& inputs,
                     const AttrMap& attrs = {}) {
  auto r = ops::instantiate(name, inputs, attrs);
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().to_string();
  return std::move(r).value();
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// Runs the reference kernel of `inst` on host buffers.
void reference_run(const ops::OpInstance& inst, const std::vector<const void*>& in,
                   const std::vector<void*>& out, uint64_t rng_offset = 0) {
  OpView op(&inst.desc());
  reference::check_supported(op);
  reference::run(op, in.data(), out.data(), rng_offset);
}

// ---- optimizer updates ------------------------------------------------------------------

TEST(KernelMath, SgdStepMatchesReference) {
  for (bool nesterov : {false, true})
    for (double momentum : {0.0, 0.9}) {
      const size_t n = 37;
      auto p = random_floats(n, 1), g = random_floats(n, 2), v = random_floats(n, 3);
      const float lr = 0.01f;  // an f32 input, read on the device as update.cu does
      auto inst =
          make("sgd_update", {{DLRT_F32, {37}}, {DLRT_F32, {37}}, {DLRT_F32, {37}}, {DLRT_F32, {}}},
               {{"momentum", momentum}, {"nesterov", nesterov}});
      std::vector<float> rp(n), rv(n);
      reference_run(inst, {p.data(), g.data(), v.data(), &lr}, {rp.data(), rv.data()});
      for (size_t i = 0; i < n; ++i) {
        math::SgdStep s = math::sgd_step(p[i], g[i], v[i], double(lr), momentum, nesterov);
        EXPECT_EQ(float(s.param), rp[i]) << i;
        EXPECT_EQ(float(s.velocity), rv[i]) << i;
      }
    }
}

TEST(KernelMath, AdamStepMatchesReference) {
  const size_t n = 41;
  auto p = random_floats(n, 4), g = random_floats(n, 5), m = random_floats(n, 6);
  auto v = random_floats(n, 7, 0.f, 1.f);
  for (float step : {1.f, 2.f, 1000.f}) {
    const float lr = 0.001f;
    auto inst = make("adam_update", {{DLRT_F32, {41}},
                                     {DLRT_F32, {41}},
                                     {DLRT_F32, {41}},
                                     {DLRT_F32, {41}},
                                     {DLRT_F32, {}},
                                     {DLRT_F32, {}}});
    std::vector<float> rp(n), rm(n), rv(n);
    reference_run(inst, {p.data(), g.data(), m.data(), v.data(), &step, &lr},
                  {rp.data(), rm.data(), rv.data()});
    const double lr_t = math::adam_lr_t(double(lr), 0.9, 0.999, step);
    for (size_t i = 0; i < n; ++i) {
      math::AdamStep s = math::adam_step(p[i], g[i], m[i], v[i], lr_t, 0.9, 0.999, 1e-7);
      EXPECT_EQ(float(s.param), rp[i]) << i;
      EXPECT_EQ(float(s.m), rm[i]) << i;
      EXPECT_EQ(float(s.v), rv[i]) << i;
    }
  }
}

// ---- sparse softmax cross-entropy -----------------------------------------------------------

TEST(KernelMath, CrossEntropyRowMatchesReference) {
  const int64_t n = 5, k = 7;
  auto logits = random_floats(n * k, 8, -5.f, 5.f);
  std::vector<int32_t> labels = {0, 6, 3, 7, -1};  // the last two are out of range: NaN rows
  auto inst = make("sparse_softmax_cross_entropy", {{DLRT_F32, {n, k}}, {DLRT_I32, {n}}});
  std::vector<float> loss(n), bp(n * k);
  reference_run(inst, {logits.data(), labels.data()}, {loss.data(), bp.data()});
  for (int64_t r = 0; r < n; ++r) {
    const float* x = logits.data() + r * k;
    double mx = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < k; ++j) mx = math::max_combine(mx, x[j]);
    for (int64_t j = 0; j < k; ++j) sum += std::exp(double(x[j]) - mx);
    const bool valid = math::label_valid(labels[r], k);
    if (!valid) {
      EXPECT_TRUE(std::isnan(loss[r]));
      continue;
    }
    EXPECT_NEAR(float(math::xent_loss(mx, sum, x[labels[r]])), loss[r], 1e-6) << r;
    for (int64_t j = 0; j < k; ++j)
      EXPECT_NEAR(float(math::xent_backprop(x[j], mx, sum, j == labels[r])), bp[r * k + j], 1e-7)
          << r << "," << j;
  }
}

// ---- random ops: Philox, bit for bit ---------------------------------------------------------

TEST(KernelMath, PhiloxValuesMatchReferenceExactly) {
  const int64_t n = 1031;  // not a multiple of 4: the last block is partial
  const uint64_t seed = 0x123456789abcdefULL, offset = 77;
  {
    auto inst =
        make("random_uniform", {},
             {{"shape", ops::Ints{n}}, {"minval", -3.0}, {"maxval", 5.0}, {"seed", int64_t(seed)}});
    std::vector<float> ref(n);
    reference_run(inst, {}, {ref.data()}, offset);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(math::uniform_value(seed, offset, i, -3.0, 5.0), ref[i]) << i;
  }
  {
    auto inst =
        make("random_normal", {},
             {{"shape", ops::Ints{n}}, {"mean", 1.0}, {"stddev", 2.0}, {"seed", int64_t(seed)}});
    std::vector<float> ref(n);
    reference_run(inst, {}, {ref.data()}, offset);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(math::normal_value(seed, offset, i, 1.0, 2.0), ref[i]) << i;
  }
  {
    const double rate = 0.3;
    auto x = random_floats(n, 9);
    auto inst = make("dropout", {{DLRT_F32, {n}}}, {{"rate", rate}, {"seed", int64_t(seed)}});
    std::vector<float> y(n), mask(n);
    reference_run(inst, {x.data()}, {y.data(), mask.data()}, offset);
    const float keep = float(1.0 / (1.0 - rate));
    int kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float m = math::dropout_mask(seed, offset, i, rate, keep);
      ASSERT_EQ(m, mask[i]) << i;
      ASSERT_EQ(float(double(x[i]) * double(m)), y[i]) << i;
      kept += m != 0.0f;
    }
    EXPECT_GT(kept, n / 2);
  }
}

// ---- index math --------------------------------------------------------------------------

TEST(KernelMath, BroadcastOffsetsMatchReference) {
  struct Case {
    ops::Dims a, b;
  };
  for (const Case& c : {Case{{2, 1, 3}, {4, 1}}, Case{{5}, {3, 1}}, Case{{2, 3}, {2, 3}},
                        Case{{1}, {2, 2, 2}}, Case{{3, 1, 4, 1}, {1, 5, 1, 6}}, Case{{}, {3}}}) {
    auto inst = make("sub", {{DLRT_F32, c.a}, {DLRT_F32, c.b}});
    const auto& out_dims = inst.output(0).dims;
    auto a = random_floats(size_t(ops::num_elements(c.a)), 10),
         b = random_floats(size_t(ops::num_elements(c.b)), 11);
    std::vector<float> ref(static_cast<size_t>(ops::num_elements(out_dims)));
    reference_run(inst, {a.data(), b.data()}, {ref.data()});
    math::Strided v = broadcast_view(c.a, c.b, out_dims, "sub");
    for (size_t i = 0; i < ref.size(); ++i) {
      int64_t oa, ob;
      math::source_offsets(v, int64_t(i), &oa, &ob);
      ASSERT_EQ(math::binary(math::Binary::kSub, a[oa], b[ob]), ref[i]) << i;
    }
  }
}

TEST(KernelMath, TransposeAndBroadcastToMatchReference) {
  const ops::Dims x_dims = {2, 3, 4, 5};
  auto x = random_floats(120, 12);
  for (const ops::Ints& perm :
       {ops::Ints{0, 1, 2, 3}, ops::Ints{3, 2, 1, 0}, ops::Ints{1, 3, 0, 2}}) {
    auto inst = make("transpose", {{DLRT_F32, x_dims}}, {{"perm", perm}});
    std::vector<float> ref(120);
    reference_run(inst, {x.data()}, {ref.data()});
    math::Strided v = transpose_view(x_dims, perm);
    for (int64_t i = 0; i < 120; ++i) ASSERT_EQ(x[math::source_offset(v, 0, i)], ref[i]);
  }
  auto inst = make("broadcast_to", {{DLRT_F32, {3, 1}}}, {{"shape", ops::Ints{2, 3, 4}}});
  std::vector<float> ref(24);
  reference_run(inst, {x.data()}, {ref.data()});
  math::Strided v = broadcast_view({3, 1}, {3, 1}, {2, 3, 4}, "broadcast_to");
  for (int64_t i = 0; i < 24; ++i) ASSERT_EQ(x[math::source_offset(v, 0, i)], ref[i]);
}

// The reduce kernels' loop (one output at a time, over its group) on the host.
TEST(KernelMath, ReductionsMatchReference) {
  const ops::Dims dims = {3, 4, 5};
  auto x = random_floats(60, 13);
  x[7] = x[9];  // a tie in reduce_max_grad's groups, for the split
  for (const ops::Ints& axes : {ops::Ints{}, ops::Ints{1}, ops::Ints{0, 2}, ops::Ints{-1}}) {
    for (const char* name : {"reduce_sum", "reduce_mean", "reduce_max"}) {
      auto inst = make(name, {{DLRT_F32, dims}}, {{"axes", axes}, {"keepdims", true}});
      OpView op(&inst.desc());
      math::Reduction r = reduction(dims, reduced_axes(op, dims));
      std::vector<float> ref(static_cast<size_t>(r.outputs));
      reference_run(inst, {x.data()}, {ref.data()});
      const bool is_max = std::string(name) == "reduce_max";
      for (int64_t o = 0; o < r.outputs; ++o) {
        double acc = is_max ? -INFINITY : 0.0;
        for (int64_t g = 0; g < r.group; ++g) {
          double v = x[math::reduction_base(r, o) + math::reduction_within(r, g)];
          acc = is_max ? math::max_combine(acc, v) : acc + v;
        }
        if (std::string(name) == "reduce_mean") acc /= double(r.group);
        EXPECT_NEAR(float(acc), ref[o], 1e-6) << name << " o=" << o;
      }
    }
  }
  // bias_add_grad, NCHW: every dim but 1 reduced.
  auto inst = make("bias_add_grad", {{DLRT_F32, dims}}, {{"data_format", "NCHW"}});
  OpView op(&inst.desc());
  std::vector<bool> reduced = {true, false, true};
  ASSERT_EQ(bias_channel_dim(op, 3), 1);
  math::Reduction r = reduction(dims, reduced);
  std::vector<float> ref(4);
  reference_run(inst, {x.data()}, {ref.data()});
  for (int64_t o = 0; o < 4; ++o) {
    double acc = 0;
    for (int64_t g = 0; g < r.group; ++g)
      acc += x[math::reduction_base(r, o) + math::reduction_within(r, g)];
    EXPECT_NEAR(float(acc), ref[o], 1e-6);
  }
}

// conv.cc's trick for SAME padding with before != after (the core's pads): grow the input by
// (after - before) and pad `before` on both sides; cuDNN's output size then equals the
// schema's.
TEST(KernelMath, GrownInputGivesTheSchemasOutputSize) {
  for (int64_t in = 1; in <= 12; ++in)
    for (int64_t k = 1; k <= 5; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 2; ++d) {
          const ops::PadPair p = ops::same_padding(in, k, s, d);
          const int64_t out = ops::window_output_size(ops::Padding::kSame, in, k, s, d);
          ASSERT_GE(p.after, p.before);
          const int64_t grown = in + (p.after - p.before);
          ASSERT_EQ(1 + (grown + 2 * p.before - ((k - 1) * d + 1)) / s, out);
        }
}

// conv2d_transpose runs as conv.cc's backward data with dy = x: the pads the schema gives for
// VALID and SAME never put fewer cells after than before (which the kernel declines), and the
// grown image (y's length + after - before, `before` on both sides) has cuDNN's forward length
// equal to x's, for every output_padding Keras allows.
TEST(KernelMath, ConvTransposePadsFitTheGrownImageTrick) {
  for (const char* padding : {"VALID", "SAME"})
    for (int64_t in = 1; in <= 6; ++in)
      for (int64_t k = 1; k <= 5; ++k)
        for (int64_t s = 1; s <= 3; ++s)
          for (int64_t d = 1; d <= 2; ++d)
            for (int64_t op = -1; op < s; ++op) {
              AttrMap attrs = {{"strides", ops::Ints{s, 1}},
                               {"dilations", ops::Ints{d, 1}},
                               {"padding", padding}};
              if (op >= 0) attrs.emplace("output_padding", ops::Ints{op, 0});
              auto r = ops::instantiate(
                  "conv2d_transpose", {{DLRT_F32, {1, in, 1, 2}}, {DLRT_F32, {k, 1, 3, 2}}}, attrs);
              if (!r.ok()) continue;  // an empty output (SAME, even kernel, op 0, in 1)
              const ops::Ints& pads = r->attrs().at("pads").as_ints();
              const int64_t out = r->output(0).dims[1];
              SCOPED_TRACE(::testing::Message() << padding << " in " << in << " k " << k << " s "
                                                << s << " d " << d << " op " << op);
              ASSERT_GE(pads[2], pads[0]);
              const int64_t grown = out + (pads[2] - pads[0]);
              ASSERT_EQ(1 + (grown + 2 * pads[0] - ((k - 1) * d + 1)) / s, in);
            }
}

// conv.cc moves HWIO filters to cuDNN's KRSC (NHWC) / KCRS (NCHW) and back with strided views.
TEST(KernelMath, FilterLayoutViewsMapHwioToCudnn) {
  const int64_t kh = 3, kw = 2, ci = 4, co = 5;
  const std::vector<int64_t> hwio = {kh, kw, ci, co};
  math::Strided krsc = transpose_view(hwio, {3, 0, 1, 2});
  math::Strided kcrs = transpose_view(hwio, {3, 2, 0, 1});
  math::Strided krsc_back = transpose_view({co, kh, kw, ci}, {1, 2, 3, 0});
  math::Strided kcrs_back = transpose_view({co, ci, kh, kw}, {2, 3, 1, 0});
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        for (int64_t c = 0; c < ci; ++c) {
          const int64_t h = math::hwio_offset(kh, kw, ci, co, i, j, c, o);
          const int64_t r = math::krsc_offset(kh, kw, ci, i, j, c, o);
          const int64_t q = math::kcrs_offset(kh, kw, ci, i, j, c, o);
          ASSERT_EQ(math::source_offset(krsc, 0, r), h);
          ASSERT_EQ(math::source_offset(kcrs, 0, q), h);
          ASSERT_EQ(math::source_offset(krsc_back, 0, h), r);
          ASSERT_EQ(math::source_offset(kcrs_back, 0, h), q);
        }
}

// A grouped filter (KH,KW,Ci/G,Co) moved by conv.cc's view into KRSC / KCRS with C = Ci/G, then
// read as cuDNN defines a grouped convolution (cudnnSetConvolutionGroupCount: group g holds
// output channels [g*K/G, (g+1)*K/G) and reads input channels [g*C_in/G, ...), each filter K
// x C/G x R x S), gives the reference's grouped conv2d: dlrt's groups and cuDNN's agree.
TEST(KernelMath, GroupedFilterInCudnnLayoutIsTheReferencesGroupedConv) {
  struct Case {
    const char* format;
    int64_t groups, ci, co;
  };
  for (const Case& c : {Case{"NHWC", 2, 4, 6}, Case{"NCHW", 3, 6, 3}, Case{"NHWC", 5, 5, 10},
                        Case{"NCHW", 4, 4, 8}}) {
    SCOPED_TRACE(std::string(c.format) + " groups " + std::to_string(c.groups));
    const bool nchw = std::string(c.format) == "NCHW";
    const int64_t n = 2, h = 5, w = 6, kh = 3, kw = 2, cig = c.ci / c.groups;
    const int64_t cog = c.co / c.groups, oh = h - kh + 1, ow = w - kw + 1;
    const ops::Dims x_dims = nchw ? ops::Dims{n, c.ci, h, w} : ops::Dims{n, h, w, c.ci};
    const std::vector<int64_t> hwio = {kh, kw, cig, c.co};
    auto fwd = make("conv2d", {{DLRT_F32, x_dims}, {DLRT_F32, hwio}},
                    {{"groups", c.groups}, {"data_format", c.format}});
    auto x = random_floats(size_t(ops::num_elements(x_dims)), 21);
    auto wt = random_floats(size_t(kh * kw * cig * c.co), 22);
    std::vector<float> ref(size_t(fwd.output(0).num_elements()));
    reference_run(fwd, {x.data(), wt.data()}, {ref.data()});
    // conv.cc's to_cudnn_ view of the filter.
    math::Strided to_cudnn = transpose_view(
        hwio, nchw ? std::vector<int64_t>{3, 2, 0, 1} : std::vector<int64_t>{3, 0, 1, 2});
    std::vector<float> f(wt.size());
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = wt[size_t(math::source_offset(to_cudnn, 0, int64_t(i)))];
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < c.co; ++k)
        for (int64_t p = 0; p < oh; ++p)
          for (int64_t q = 0; q < ow; ++q) {
            const int64_t g = k / cog;
            double acc = 0;
            for (int64_t ch = 0; ch < cig; ++ch)
              for (int64_t r = 0; r < kh; ++r)
                for (int64_t s2 = 0; s2 < kw; ++s2) {
                  const int64_t fo = nchw ? math::kcrs_offset(kh, kw, cig, r, s2, ch, k)
                                          : math::krsc_offset(kh, kw, cig, r, s2, ch, k);
                  acc += double(x[size_t(math::image_offset(nchw, h, w, c.ci, b, p + r, q + s2,
                                                            g * cig + ch))]) *
                         double(f[size_t(fo)]);
                }
            const int64_t yo = math::image_offset(nchw, oh, ow, c.co, b, p, q, k);
            ASSERT_NEAR(float(acc), ref[size_t(yo)], 1e-5) << "output " << yo;
          }
  }
}

// pool.cu's forward and gather-style backward loops, replayed on the host.
TEST(KernelMath, OwnPoolingMatchesReference) {
  struct Case {
    ops::Dims x;
    ops::Ints k, s;
    const char* padding;
    const char* format;
  };
  for (const Case& c : {Case{{2, 7, 6, 3}, {3, 3}, {2, 2}, "SAME", "NHWC"},
                        Case{{1, 3, 8, 5}, {2, 2}, {2, 2}, "SAME", "NCHW"},
                        Case{{2, 6, 6, 2}, {3, 2}, {1, 2}, "VALID", "NHWC"},
                        Case{{1, 2, 5, 5}, {2, 3}, {1, 1}, "SAME", "NCHW"}}) {
    const int64_t nx = ops::num_elements(c.x);
    auto x = random_floats(size_t(nx), 14);
    x[0] = x[1];  // a tie: the gradient goes to the first maximum
    AttrMap attrs = {
        {"ksize", c.k}, {"strides", c.s}, {"padding", c.padding}, {"data_format", c.format}};
    for (bool is_max : {true, false}) {
      auto fwd = make(is_max ? "max_pool2d" : "avg_pool2d", {{DLRT_F32, c.x}}, attrs);
      OpView op(&fwd.desc());
      const bool nchw = std::string(c.format) == "NCHW";
      plugin::ImageShape xs = plugin::image_shape(c.x, nchw);
      plugin::ImageShape ys = plugin::image_shape(fwd.output(0).dims, nchw);
      plugin::Window1D wh = plugin::window_of(op, 0, xs.h, c.k[0], c.s[0], 1, ys.h);
      plugin::Window1D ww = plugin::window_of(op, 1, xs.w, c.k[1], c.s[1], 1, ys.w);
      math::Pool2D g;
      g.nchw = nchw, g.n = xs.n, g.h = xs.h, g.w = xs.w, g.c = xs.c, g.oh = wh.out, g.ow = ww.out;
      g.kh = c.k[0], g.kw = c.k[1], g.sh = c.s[0], g.sw = c.s[1], g.pad_top = wh.pad_before,
      g.pad_left = ww.pad_before;
      const int64_t ny = fwd.output(0).num_elements();
      std::vector<float> ref(static_cast<size_t>(ny));
      reference_run(fwd, {x.data()}, {ref.data()});
      for (int64_t i = 0; i < ny; ++i) {
        int64_t n, oh, ow, ch;
        math::image_coords(nchw, g.oh, g.ow, g.c, i, &n, &oh, &ow, &ch);
        if (is_max) {
          ASSERT_EQ(x[math::pool_argmax(g, x.data(), n, oh, ow, ch)], ref[i]);
        } else {
          double sum = 0;
          int64_t count = 0;
          for (int64_t a = 0; a < g.kh; ++a)
            for (int64_t b = 0; b < g.kw; ++b) {
              int64_t ih = oh * g.sh - g.pad_top + a, iw = ow * g.sw - g.pad_left + b;
              if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w)
                sum += x[math::image_offset(nchw, g.h, g.w, g.c, n, ih, iw, ch)], ++count;
            }
          ASSERT_EQ(count, math::pool_count(g, oh, ow));
          ASSERT_NEAR(float(sum / double(count)), ref[i], 1e-6);
        }
      }
      // Backward: gather per input cell over the covering outputs.
      auto dy = random_floats(size_t(ny), 15);
      AttrMap battrs = attrs;
      std::vector<float> dref(static_cast<size_t>(nx));
      if (is_max) {
        auto bwd =
            make("max_pool2d_backward", {{DLRT_F32, c.x}, {DLRT_F32, fwd.output(0).dims}}, battrs);
        reference_run(bwd, {x.data(), dy.data()}, {dref.data()});
      } else {
        battrs["input_shape"] = ops::Ints(c.x.begin(), c.x.end());
        auto bwd = make("avg_pool2d_backward", {{DLRT_F32, fwd.output(0).dims}}, battrs);
        reference_run(bwd, {dy.data()}, {dref.data()});
      }
      for (int64_t i = 0; i < nx; ++i) {
        int64_t n, ih, iw, ch, oh0, oh1, ow0, ow1;
        math::image_coords(nchw, g.h, g.w, g.c, i, &n, &ih, &iw, &ch);
        math::covering_outputs(ih, g.pad_top, g.kh, g.sh, g.oh, &oh0, &oh1);
        math::covering_outputs(iw, g.pad_left, g.kw, g.sw, g.ow, &ow0, &ow1);
        double acc = 0;
        for (int64_t oh = oh0; oh < oh1; ++oh)
          for (int64_t ow = ow0; ow < ow1; ++ow) {
            double d = dy[math::image_offset(nchw, g.oh, g.ow, g.c, n, oh, ow, ch)];
            if (is_max) acc += math::pool_argmax(g, x.data(), n, oh, ow, ch) == i ? d : 0.0;
            else acc += d / double(math::pool_count(g, oh, ow));
          }
        ASSERT_NEAR(float(acc), dref[i], 1e-6)
            << (is_max ? "max" : "avg") << " " << c.padding << " i=" << i;
      }
    }
  }
}

// ---- cast and fill -----------------------------------------------------------------------------

TEST(KernelMath, CastMatchesReferenceForEveryPair) {
  const std::vector<dlrt_dtype> types = {DLRT_F32, DLRT_F64, DLRT_I32, DLRT_I64, DLRT_U8,
                                         DLRT_I8,  DLRT_U16, DLRT_I16, DLRT_U32, DLRT_U64,
                                         DLRT_BOOL};
  // Each dtype's edges and the values just past them (u64's top half included: 1e19).
  const std::vector<double> values = {
      0.0,      -0.0,     1.5,    -1.5, 2.7,  -2.7, 127.9, 128.0,
      255.5,    256.0,    -129.0, 3e9,  -3e9, 1e20, -1e20, std::numeric_limits<double>::quiet_NaN(),
      INFINITY, -INFINITY, 32767.5, 32768.0, -32769.0, 65535.9, 65536.0, 4294967295.5,
      4294967296.0, 9.3e18, 1e19, 1.8446744073709552e19};
  for (dlrt_dtype from : types) {
    // Inputs: the values above, stored in `from` the way fill stores them.
    const size_t esize = plugin::dtype_size(from);
    std::vector<uint8_t> x(values.size() * esize);
    for (size_t i = 0; i < values.size(); ++i)
      math::store_double(x.data(), from, int64_t(i), values[i]);
    for (dlrt_dtype to : types) {
      auto inst = make("cast", {{from, {int64_t(values.size())}}}, {{"dtype", to}});
      const size_t osize = plugin::dtype_size(to);
      std::vector<uint8_t> ref(values.size() * osize), got(values.size() * osize);
      reference_run(inst, {x.data()}, {ref.data()});
      if (from == to) got = x;
      else
        for (size_t i = 0; i < values.size(); ++i)
          math::cast_element(x.data(), from, got.data(), to, int64_t(i));
      for (size_t i = 0; i < values.size(); ++i)
        ASSERT_EQ(std::memcmp(&got[i * osize], &ref[i * osize], osize), 0)
            << plugin::dtype_name(from) << " -> " << plugin::dtype_name(to) << " value "
            << values[i];
    }
  }
  // fill's value pattern is the same conversion.
  for (dlrt_dtype to : types) {
    auto inst = make("fill", {}, {{"shape", ops::Ints{3}}, {"value", -2.5}, {"dtype", to}});
    std::vector<uint8_t> ref(3 * plugin::dtype_size(to));
    reference_run(inst, {}, {ref.data()});
    uint64_t pattern = 0;
    math::store_double(&pattern, to, 0, -2.5);
    EXPECT_EQ(std::memcmp(&pattern, ref.data(), plugin::dtype_size(to)), 0)
        << plugin::dtype_name(to);
  }
}

// ---- element-wise -----------------------------------------------------------------------------

TEST(KernelMath, ElementwiseMatchReference) {
  auto x = random_floats(64, 16, -3.f, 3.f);
  x[0] = 0.0f, x[1] = -1.0f, x[2] = 2.5f, x[3] = -0.5f;  // 0, a domain edge, ties (round)
  const std::vector<int64_t> dims = {64};
  struct U {
    const char* name;
    float (*forward)(float, math::EltwiseParams);
  };
  for (const U& u : {U{"neg", math::Neg::forward},     U{"exp", math::Exp::forward},
                     U{"log", math::Log::forward},     U{"sqrt", math::Sqrt::forward},
                     U{"sin", math::Sin::forward},     U{"cos", math::Cos::forward},
                     U{"tan", math::Tan::forward},     U{"asin", math::Asin::forward},
                     U{"acos", math::Acos::forward},   U{"atan", math::Atan::forward},
                     U{"sinh", math::Sinh::forward},   U{"cosh", math::Cosh::forward},
                     U{"asinh", math::Asinh::forward}, U{"acosh", math::Acosh::forward},
                     U{"atanh", math::Atanh::forward}, U{"erf", math::Erf::forward},
                     U{"ceil", math::Ceil::forward},   U{"floor", math::Floor::forward},
                     U{"round", math::Round::forward}, U{"sign", math::Sign::forward}}) {
    auto inst = make(u.name, {{DLRT_F32, dims}});
    std::vector<float> ref(64);
    reference_run(inst, {x.data()}, {ref.data()});
    for (int i = 0; i < 64; ++i) {
      float got = u.forward(x[i], {});
      if (std::isnan(ref[i])) EXPECT_TRUE(std::isnan(got)) << u.name;
      else if (std::isinf(ref[i])) EXPECT_EQ(got, ref[i]) << u.name;
      else
        EXPECT_NEAR(got, ref[i], 1e-5 * std::max(1.0f, std::fabs(ref[i]))) << u.name << " " << x[i];
    }
  }
  auto dy = random_floats(64, 17);
  struct G {
    const char* name;
    math::ActGrad op;
  };
  for (const G& g :
       {G{"relu_grad", math::ActGrad::kRelu}, G{"sigmoid_grad", math::ActGrad::kSigmoid},
        G{"tanh_grad", math::ActGrad::kTanh}}) {
    auto inst = make(g.name, {{DLRT_F32, dims}, {DLRT_F32, dims}});
    std::vector<float> ref(64);
    reference_run(inst, {dy.data(), x.data()}, {ref.data()});
    for (int i = 0; i < 64; ++i)
      EXPECT_NEAR(math::act_grad(g.op, dy[i], x[i]), ref[i], 1e-5) << g.name;
  }
  // bias_add + activation epilogue, NCHW: channel_of with inner = H*W.
  auto b = random_floats(3, 18);
  auto inst =
      make("bias_add", {{DLRT_F32, {2, 3, 2, 5}}, {DLRT_F32, {3}}}, {{"data_format", "NCHW"}});
  std::vector<float> ref(60);
  reference_run(inst, {x.data(), b.data()}, {ref.data()});
  for (int64_t i = 0; i < 60; ++i)
    EXPECT_EQ(math::activate(math::Act::kNone, x[i] + b[math::channel_of(i, 3, 10)]), ref[i]);
}

// leaky_relu and leaky_relu_grad with two slopes (one above 1), at 0 and on both sides.
TEST(KernelMath, LeakyReluMatchesReference) {
  auto x = random_floats(64, 19, -3.f, 3.f);
  x[0] = 0.0f;
  auto dy = random_floats(64, 20);
  const std::vector<int64_t> dims = {64};
  for (double alpha : {0.2, 1.5}) {
    auto fwd = make("leaky_relu", {{DLRT_F32, dims}}, {{"alpha", alpha}});
    auto bwd = make("leaky_relu_grad", {{DLRT_F32, dims}, {DLRT_F32, dims}}, {{"alpha", alpha}});
    std::vector<float> y(64), dx(64);
    reference_run(fwd, {x.data()}, {y.data()});
    reference_run(bwd, {dy.data(), x.data()}, {dx.data()});
    for (int i = 0; i < 64; ++i) {
      EXPECT_FLOAT_EQ(math::leaky_relu(x[i], float(alpha)), y[i]) << x[i];
      EXPECT_FLOAT_EQ(math::leaky_relu_grad(dy[i], x[i], float(alpha)), dx[i]) << x[i];
    }
  }
}

// ---- cut, join, frame; global pools (cut_join.cu) -------------------------------------------

// concat and split as cut_join.cu's 2-D copies (emulated with memcpy), against the reference.
TEST(KernelMath, ConcatSplitRowsMatchReference) {
  const std::vector<std::vector<int64_t>> parts = {{2, 1, 3}, {2, 4, 3}, {2, 2, 3}};
  const std::vector<int64_t> whole = {2, 7, 3};
  std::vector<std::vector<float>> xs;
  std::vector<TensorType> types;
  std::vector<const void*> ins;
  for (size_t k = 0; k < parts.size(); ++k) {
    xs.push_back(random_floats(size_t(parts[k][0] * parts[k][1] * parts[k][2]), 30 + k));
    types.push_back({DLRT_F32, parts[k]});
  }
  for (auto& x : xs) ins.push_back(x.data());
  auto inst = make("concat", types, {{"axis", -2}});
  std::vector<float> ref(42), got(42);
  reference_run(inst, ins, {ref.data()});
  const math::PartRows r = math::part_rows(whole.data(), 3, 1, sizeof(float));
  int64_t at = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const int64_t run = parts[k][1] * r.unit;
    for (int64_t row = 0; row < r.rows; ++row)
      std::memcpy(reinterpret_cast<char*>(got.data()) + row * 7 * r.unit + at,
                  reinterpret_cast<const char*>(xs[k].data()) + row * run, size_t(run));
    at += run;
  }
  EXPECT_EQ(got, ref);
  // split is the same rows read the other way: part 1 of the whole.
  auto sp = make("split", {{DLRT_F32, whole}}, {{"axis", 1}, {"sizes", ops::Ints{1, 4, 2}}});
  std::vector<float> p0(6), p1(24), p2(12);
  reference_run(sp, {ref.data()}, {p0.data(), p1.data(), p2.data()});
  EXPECT_EQ(p1, xs[1]);
}

// slice (every stride sign, clamped bounds) and slice_grad, replayed with slice_offset.
TEST(KernelMath, SliceMatchesReference) {
  struct Case {
    std::vector<int64_t> x;
    AttrMap attrs;
  };
  const Case cases[] = {
      {{5, 7}, {{"begin", ops::Ints{1, 2}}, {"end", ops::Ints{4, 7}}}},
      {{2, 9, 9, 3},
       {{"axes", ops::Ints{1, 2}},
        {"begin", ops::Ints{1, 0}},
        {"end", ops::Ints{8, 9}},
        {"strides", ops::Ints{2, 3}}}},
      {{6, 5},
       {{"axes", ops::Ints{-1}},
        {"begin", ops::Ints{10}},
        {"end", ops::Ints{-10}},
        {"strides", ops::Ints{-2}}}},
      {{4, 5, 3},
       {{"axes", ops::Ints{0}},
        {"begin", ops::Ints{-1}},
        {"end", ops::Ints{std::numeric_limits<int64_t>::min()}},
        {"strides", ops::Ints{-1}}}},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    auto fwd = make("slice", {{DLRT_F32, c.x}}, c.attrs);
    const std::vector<int64_t> y_dims = fwd.output(0).dims;
    const int64_t nx = fwd.inputs()[0].num_elements(), ny = fwd.output(0).num_elements();
    auto x = random_floats(size_t(nx), seed++);
    std::vector<float> ref(static_cast<size_t>(ny)), got(static_cast<size_t>(ny));
    reference_run(fwd, {x.data()}, {ref.data()});
    OpView op(&fwd.desc());
    int64_t base = 0;
    const math::Strided v = slice_view(op, y_dims, c.x, &base);
    for (int64_t i = 0; i < ny; ++i) got[size_t(i)] = x[size_t(math::slice_offset(v, base, i))];
    EXPECT_EQ(got, ref);

    AttrMap ga = c.attrs;
    ga["shape"] = ops::Ints(c.x.begin(), c.x.end());
    auto bwd = make("slice_grad", {{DLRT_F32, y_dims}}, ga);
    auto dy = random_floats(size_t(ny), seed++);
    std::vector<float> dref(static_cast<size_t>(nx)), dgot(static_cast<size_t>(nx), 0.0f);
    reference_run(bwd, {dy.data()}, {dref.data()});
    OpView bop(&bwd.desc());
    const math::Strided bv = slice_view(bop, y_dims, c.x, &base);
    for (int64_t i = 0; i < ny; ++i) dgot[size_t(math::slice_offset(bv, base, i))] = dy[size_t(i)];
    EXPECT_EQ(dgot, dref);
  }
}

// pad in both modes and pad_grad (every cell's mirrors summed), replayed on the host.
TEST(KernelMath, PadAndPadGradMatchReference) {
  struct Case {
    std::vector<int64_t> x;
    ops::Ints pads;
    const char* mode;
  };
  const Case cases[] = {
      {{3, 4}, {1, 2, 0, 1}, "constant"}, {{1, 5, 5, 3}, {0, 1, 2, 0, 0, 2, 1, 0}, "constant"},
      {{3, 4}, {2, 1, 1, 3}, "reflect"},  {{2, 5, 5, 3}, {0, 2, 1, 0, 0, 2, 3, 0}, "reflect"},
      {{7}, {6, 6}, "reflect"},
  };
  uint32_t seed = 60;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    auto fwd =
        make("pad", {{DLRT_F32, c.x}}, {{"pads", c.pads}, {"mode", c.mode}, {"value", 1.25}});
    const std::vector<int64_t> y_dims = fwd.output(0).dims;
    const int64_t nx = fwd.inputs()[0].num_elements(), ny = fwd.output(0).num_elements();
    auto x = random_floats(size_t(nx), seed++);
    std::vector<float> ref(static_cast<size_t>(ny)), got(static_cast<size_t>(ny));
    reference_run(fwd, {x.data()}, {ref.data()});
    OpView op(&fwd.desc());
    const bool reflect = std::string(c.mode) == "reflect";
    const math::PadGeom g = pad_geom(op, c.x, y_dims, reflect);
    for (int64_t i = 0; i < ny; ++i) {
      const int64_t k = math::pad_source(g, i);
      got[size_t(i)] = k < 0 ? 1.25f : x[size_t(k)];
    }
    EXPECT_EQ(got, ref);
    if (!reflect) continue;
    auto bwd = make("pad_grad", {{DLRT_F32, y_dims}}, {{"pads", c.pads}});
    auto dy = random_floats(size_t(ny), seed++);
    std::vector<float> dref(static_cast<size_t>(nx)), dgot(static_cast<size_t>(nx));
    reference_run(bwd, {dy.data()}, {dref.data()});
    OpView bop(&bwd.desc());
    const math::PadGeom bg = pad_geom(bop, c.x, y_dims, true);
    for (int64_t j = 0; j < nx; ++j) dgot[size_t(j)] = math::pad_grad_at(bg, dy.data(), j);
    for (int64_t j = 0; j < nx; ++j) EXPECT_NEAR(dgot[size_t(j)], dref[size_t(j)], 1e-5) << j;
  }
}

// The global pools and their backward ops in both layouts, with ties and a NaN.
TEST(KernelMath, GlobalPoolsMatchReference) {
  for (const char* format : {"NHWC", "NCHW"})
    for (bool keepdims : {false, true}) {
      SCOPED_TRACE(std::string(format) + (keepdims ? " keepdims" : ""));
      const std::vector<int64_t> x_dims = std::string(format) == "NHWC"
                                              ? std::vector<int64_t>{2, 3, 5, 4}
                                              : std::vector<int64_t>{2, 4, 3, 5};
      const AttrMap attrs{{"data_format", format}, {"keepdims", keepdims}};
      auto x = random_floats(120, 80);
      for (size_t i = 0; i < 120; i += 7) x[i] = std::round(x[i]);  // ties
      x[13] = std::numeric_limits<float>::quiet_NaN();
      auto avg = make("global_avg_pool2d", {{DLRT_F32, x_dims}}, attrs);
      auto max = make("global_max_pool2d", {{DLRT_F32, x_dims}}, attrs);
      const std::vector<int64_t> y_dims = avg.output(0).dims;
      std::vector<float> avg_ref(8), max_ref(8);
      reference_run(avg, {x.data()}, {avg_ref.data()});
      reference_run(max, {x.data()}, {max_ref.data()});
      OpView op(&avg.desc());
      const math::GlobalPool g = global_pool_geom(op, x_dims);
      for (int64_t p = 0; p < 8; ++p) {
        const float m = x[size_t(math::plane_argmax(g, x.data(), p))];
        if (std::isnan(max_ref[size_t(p)])) EXPECT_TRUE(std::isnan(m)) << p;
        else EXPECT_EQ(m, max_ref[size_t(p)]) << p;
        if (!std::isnan(avg_ref[size_t(p)]))
          EXPECT_FLOAT_EQ(math::plane_mean(g, x.data(), p), avg_ref[size_t(p)]);
      }
      auto dy = random_floats(8, 81);
      AttrMap ba = attrs;
      ba["input_shape"] = ops::Ints(x_dims.begin(), x_dims.end());
      auto avg_b = make("global_avg_pool2d_backward", {{DLRT_F32, y_dims}}, ba);
      auto max_b =
          make("global_max_pool2d_backward", {{DLRT_F32, x_dims}, {DLRT_F32, y_dims}}, attrs);
      std::vector<float> avg_dx(120), max_dx(120), got(120, 0.0f);
      reference_run(avg_b, {dy.data()}, {avg_dx.data()});
      reference_run(max_b, {x.data(), dy.data()}, {max_dx.data()});
      for (int64_t i = 0; i < 120; ++i)
        EXPECT_FLOAT_EQ(dy[size_t(math::plane_of(g, i))] * (1.0f / 15.0f), avg_dx[size_t(i)]) << i;
      for (int64_t p = 0; p < 8; ++p)
        got[size_t(math::plane_argmax(g, x.data(), p))] = dy[size_t(p)];
      EXPECT_EQ(got, max_dx);
    }
}

// resize and resize_grad in every mode, both layouts, up, down and non-integer ratios, and
// the .5 ties where the nearest modes differ: resize_at and resize_grad_at (the kernels' per
// element code) against the reference's taps and scatter.
TEST(KernelMath, ResizeAndResizeGradMatchReference) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, c, oh, ow;
  };
  const Geometry geometries[] = {
      {"NHWC", 1, 3, 4, 2, 6, 8}, {"NCHW", 2, 4, 5, 3, 7, 3},   {"NHWC", 2, 6, 6, 5, 3, 2},
      {"NHWC", 1, 1, 1, 3, 4, 5}, {"NCHW", 1, 7, 5, 2, 1, 1},   {"NHWC", 1, 4, 2, 2, 2, 1},
      {"NCHW", 2, 3, 4, 3, 2, 3}, {"NHWC", 1, 5, 16, 1, 13, 3},
  };
  const std::vector<std::pair<const char*, const char*>> modes = {
      {"bilinear", "round_prefer_floor"},
      {"nearest", "round_prefer_floor"},
      {"nearest", "round_prefer_ceil"},
      {"nearest", "floor"},
      {"nearest", "ceil"},
  };
  uint32_t seed = 90;
  for (const Geometry& geo : geometries)
    for (const char* coord : {"half_pixel", "align_corners", "asymmetric"})
      for (const auto& [mode, nearest] : modes) {
        SCOPED_TRACE(std::string(geo.format) + " " + std::to_string(geo.h) + "x" +
                     std::to_string(geo.w) + " -> " + std::to_string(geo.oh) + "x" +
                     std::to_string(geo.ow) + " " + mode + " " + coord + " " + nearest);
        const std::vector<int64_t> x_dims = ops::image_dims(geo.format, geo.n, geo.h, geo.w, geo.c);
        const std::vector<int64_t> y_dims =
            ops::image_dims(geo.format, geo.n, geo.oh, geo.ow, geo.c);
        AttrMap attrs{{"data_format", geo.format},
                      {"mode", mode},
                      {"coordinate_transformation", coord},
                      {"nearest_mode", nearest}};
        AttrMap fa = attrs;
        fa["size"] = ops::Ints{geo.oh, geo.ow};
        auto fwd = make("resize", {{DLRT_F32, x_dims}}, fa);
        const int64_t nx = fwd.inputs()[0].num_elements(), ny = fwd.output(0).num_elements();
        auto x = random_floats(size_t(nx), seed++);
        std::vector<float> ref(size_t(ny), 0.0f);
        reference_run(fwd, {x.data()}, {ref.data()});
        OpView op(&fwd.desc());
        const math::ResizeGeom g = resize_geom(op, x_dims, y_dims);
        for (int64_t j = 0; j < ny; ++j)
          EXPECT_NEAR(math::resize_at(g, x.data(), j), ref[size_t(j)], 1e-6) << j;

        AttrMap ba = attrs;
        ba["input_shape"] = ops::Ints(x_dims.begin(), x_dims.end());
        auto bwd = make("resize_grad", {{DLRT_F32, y_dims}}, ba);
        auto dy = random_floats(size_t(ny), seed++);
        std::vector<float> dref(size_t(nx), 0.0f);
        reference_run(bwd, {dy.data()}, {dref.data()});
        OpView bop(&bwd.desc());
        const math::ResizeGeom bg = resize_geom(bop, x_dims, y_dims);
        for (int64_t j = 0; j < nx; ++j)
          EXPECT_NEAR(math::resize_grad_at(bg, dy.data(), j), dref[size_t(j)], 1e-5) << j;
      }
}

// The nearest modes on the ties ONNX's spec names: 2 -> 1 half_pixel reads 0.5 (prefer
// floor: row 0, prefer ceil: row 1), and Keras' x2 nearest (asymmetric, floor) repeats rows.
TEST(KernelMath, ResizeNearestRoundingKnownValues) {
  math::ResizeAxis a;
  a.in = 2, a.out = 1;
  EXPECT_EQ(math::resize_coordinate(a, 0), 0.5);
  EXPECT_EQ(math::resize_tap(a, 0).i0, 0);
  a.round = math::NearestRound::kRoundPreferCeil;
  EXPECT_EQ(math::resize_tap(a, 0).i0, 1);
  a.in = 3, a.out = 6, a.coord = math::ResizeCoord::kAsymmetric,
  a.round = math::NearestRound::kFloor;
  for (int64_t o = 0; o < 6; ++o) EXPECT_EQ(math::resize_tap(a, o).i0, o / 2) << o;
  int64_t lo, hi;
  math::resize_feeders(a, 1, &lo, &hi);
  EXPECT_EQ(lo, 2);
  EXPECT_EQ(hi, 4);
}

}  // namespace
}  // namespace dlrt::cuda

namespace dlrt::cuda::math {
namespace {

// matmul.cc hands cuBLASLt the alignment its pointers really have, capped at 16 (what its
// vectorised kernels need): an executor may hand out pointers at an offset with less.
TEST(CommonAlignment, IsTheLargestPowerOfTwoDividingEveryPointerCappedAt16) {
  auto at = [](uintptr_t a) { return reinterpret_cast<const void*>(a); };
  EXPECT_EQ(common_alignment({at(0x1000), at(0x2040)}, 16), 16u);  // arena buffers: 64 -> 16
  EXPECT_EQ(common_alignment({at(0x1000), at(0x2008)}, 16), 8u);
  EXPECT_EQ(common_alignment({at(0x1004), at(0x2000), at(0x3000)}, 16), 4u);  // an offset view
  EXPECT_EQ(common_alignment({at(0x1002)}, 16), 2u);
  EXPECT_EQ(common_alignment({at(0x1000)}, 64), 64u);
  EXPECT_EQ(common_alignment({}, 16), 16u);
}

// one_hot: one_hot_at (the kernel's per-element code) against the reference for i32 and i64
// ids of rank 1 and 2, f32 and i64 outputs, ids outside [0, depth) on both sides (all-off
// rows) and depth 1.
TEST(KernelMath, OneHotMatchesReference) {
  struct Case {
    std::vector<int64_t> ids;
    std::vector<int64_t> dims;
    int64_t depth;
  };
  const Case cases[] = {{{0, 3, -1, 4, 5, 2, 3}, {7}, 5},
                        {{1, 0, 0, -7, 1, 2}, {2, 3}, 2},
                        {{0, 1, -1}, {3}, 1}};
  for (const Case& k : cases)
    for (dlrt_dtype it : {DLRT_I32, DLRT_I64})
      for (dlrt_dtype ot : {DLRT_F32, DLRT_I64}) {
        SCOPED_TRACE(ops::format_dims(k.dims) + " depth " + std::to_string(k.depth));
        std::vector<int32_t> ids32(k.ids.begin(), k.ids.end());
        const void* ids = it == DLRT_I64 ? static_cast<const void*>(k.ids.data()) : ids32.data();
        const AttrMap attrs = {{"depth", k.depth}, {"on_value", 3.0}, {"off_value", -1.0},
                               {"dtype", ot}};
        auto inst = make("one_hot", {{it, k.dims}}, attrs);
        const int64_t n = static_cast<int64_t>(k.ids.size()) * k.depth;
        if (ot == DLRT_F32) {
          std::vector<float> ref(size_t(n), 99.0f);
          reference_run(inst, {ids}, {ref.data()});
          for (int64_t j = 0; j < n; ++j) {
            const float v = it == DLRT_I64 ? math::one_hot_at(k.ids.data(), k.depth, 3.0f, -1.0f, j)
                                           : math::one_hot_at(ids32.data(), k.depth, 3.0f, -1.0f, j);
            ASSERT_EQ(v, ref[size_t(j)]) << j;
          }
        } else {
          std::vector<int64_t> ref(size_t(n), 99);
          reference_run(inst, {ids}, {ref.data()});
          for (int64_t j = 0; j < n; ++j) {
            const int64_t v = it == DLRT_I64
                                  ? math::one_hot_at(k.ids.data(), k.depth, int64_t{3}, int64_t{-1}, j)
                                  : math::one_hot_at(ids32.data(), k.depth, int64_t{3}, int64_t{-1}, j);
            ASSERT_EQ(v, ref[size_t(j)]) << j;
          }
        }
      }
  // An out-of-range id's row is all off.
  const int32_t bad[2] = {-1, 2};
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(math::one_hot_at(bad, 2, 1.0f, 0.0f, j), 0.0f) << j;
}

// cumsum: cumsum_line (the kernel's per-thread code) against the reference on every axis of a
// rank-3 tensor, each exclusive/reverse pair, a length-1 axis and a long rank-1 line.
TEST(KernelMath, CumsumMatchesReference) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
  };
  const Case cases[] = {{{3, 5, 7}, 0}, {{3, 5, 7}, 1}, {{3, 5, 7}, -1}, {{6, 1, 3}, 1}, {{1000}, 0}};
  for (const Case& k : cases)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(ops::format_dims(k.dims) + " axis " + std::to_string(k.axis) +
                     (exclusive ? " exclusive" : "") + (reverse ? " reverse" : ""));
        const int64_t n = ops::num_elements(k.dims);
        auto x = random_floats(size_t(n), 41);
        auto inst = make("cumsum", {{DLRT_F32, k.dims}},
                         {{"axis", k.axis}, {"exclusive", exclusive}, {"reverse", reverse}});
        std::vector<float> ref(static_cast<size_t>(n));
        reference_run(inst, {x.data()}, {ref.data()});
        const int rank = static_cast<int>(k.dims.size());
        const int axis = static_cast<int>(k.axis < 0 ? k.axis + rank : k.axis);
        const math::ScanGeom g = math::scan_geom(k.dims.data(), rank, axis, exclusive, reverse);
        std::vector<float> got(size_t(n), 123.0f);  // every element must be written
        for (int64_t l = 0; l < math::scan_lines(g); ++l) math::cumsum_line(g, x.data(), got.data(), l);
        // Both sum in double in the same order: the same float.
        for (int64_t j = 0; j < n; ++j) ASSERT_EQ(got[size_t(j)], ref[size_t(j)]) << j;
      }
  // By hand: (1, 2, 3) inclusive 1 3 6; exclusive 0 1 3; reverse 6 5 3; both 5 3 0.
  const float x[3] = {1, 2, 3};
  const int64_t d[1] = {3};
  const float want[4][3] = {{1, 3, 6}, {0, 1, 3}, {6, 5, 3}, {5, 3, 0}};
  for (int m = 0; m < 4; ++m) {
    float y[3];
    math::cumsum_line(math::scan_geom(d, 1, 0, m == 1 || m == 3, m >= 2), x, y, 0);
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y[j], want[m][j]) << m << " " << j;
  }
}

// multinomial: multinomial_draw (one GPU thread's code) against the reference, draw by draw,
// on random rows (narrow and wide logit ranges, a byte vocabulary and a long row), rows with
// -inf entries, and the rows without a distribution (-1).
TEST(KernelMath, MultinomialMatchesReference) {
  struct Case {
    int64_t rows, k, samples;
    float range;
  };
  const Case cases[] = {{4, 10, 1, 2.f}, {8, 256, 5, 2.f}, {7, 33, 3, 60.f}, {2, 5000, 4, 2.f},
                        {5, 1, 2, 2.f}};
  for (const Case& c : cases)
    for (uint64_t offset : {uint64_t{0}, uint64_t{7}, uint64_t{1} << 40}) {
      SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.k) + " S " +
                   std::to_string(c.samples) + " offset " + std::to_string(offset));
      auto x = random_floats(size_t(c.rows * c.k), 61, -c.range, c.range);
      if (c.rows > 2 && c.k > 3) {
        for (int64_t j = 0; j < c.k; ++j) x[size_t(c.k + j)] = -INFINITY;  // row 1: all -inf
        x[size_t(2 * c.k + 1)] = NAN;                                     // row 2: a NaN
        x[size_t(2 * c.k + 1 + c.k)] = -INFINITY;                         // row 3: a masked id
        x[size_t(2 * c.k + 3 + c.k)] = -INFINITY;
      }
      auto inst = make("multinomial", {{DLRT_F32, {c.rows, c.k}}},
                       {{"num_samples", c.samples}, {"seed", int64_t{-3}}});
      std::vector<int64_t> ref(size_t(c.rows * c.samples), -9);
      reference_run(inst, {x.data()}, {ref.data()}, offset);
      for (int64_t b = 0; b < c.rows; ++b)
        for (int64_t s = 0; s < c.samples; ++s)
          ASSERT_EQ(math::multinomial_draw(x.data(), c.k, c.samples, uint64_t(-3), offset, b, s),
                    ref[size_t(b * c.samples + s)])
              << "row " << b << " draw " << s;
      if (c.rows > 2 && c.k > 3) {
        EXPECT_EQ(ref[size_t(c.samples)], -1);
        EXPECT_EQ(ref[size_t(2 * c.samples)], -1);
      }
    }
  // By hand: one finite logit among -inf is always drawn; +inf makes the row -1.
  const float one[4] = {-INFINITY, -INFINITY, 0.5f, -INFINITY};
  const float plus[3] = {0.f, INFINITY, 1.f};
  for (int64_t s = 0; s < 50; ++s) {
    EXPECT_EQ(math::multinomial_draw(one, 4, 50, 1, 2, 0, s), 2);
    EXPECT_EQ(math::multinomial_draw(plus, 3, 50, 1, 2, 0, s), -1);
  }
  const math::SoftmaxRow r = math::softmax_row(one, 4);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.max, 0.5f);
  EXPECT_EQ(r.z, 1.0);
}

// top_k: top_k_row (the kernel's per-thread code) against the reference on random rows,
// rows of small integers (ties: lower index first), k = 1 and k = N, sorted and not, and NaN
// (above every number).
TEST(KernelMath, TopKMatchesReference) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t k;
    bool ties;
  };
  const Case cases[] = {{{4, 10}, 3, false}, {{3, 5, 7}, 7, false}, {{9}, 1, false},
                        {{2, 300}, 40, false}, {{6, 12}, 5, true}, {{3, 4, 11}, 11, true}};
  std::mt19937 rng(8);
  for (const Case& c : cases)
    for (bool sorted : {true, false}) {
      SCOPED_TRACE(ops::format_dims(c.dims) + " k " + std::to_string(c.k) +
                   (sorted ? "" : " unsorted"));
      const int64_t n = c.dims.back(), numel = ops::num_elements(c.dims), rows = numel / n;
      auto x = random_floats(size_t(numel), 51);
      if (c.ties)
        for (auto& v : x) v = float(std::uniform_int_distribution<int>(-2, 2)(rng));
      x[1] = std::numeric_limits<float>::quiet_NaN();
      auto inst = make("top_k", {{DLRT_F32, c.dims}}, {{"k", c.k}, {"sorted", sorted}});
      const size_t m = size_t(rows * c.k);
      std::vector<float> rv(m);
      std::vector<int64_t> ri(m);
      reference_run(inst, {x.data()}, {rv.data(), ri.data()});
      std::vector<float> gv(m, 123.0f);
      std::vector<int64_t> gi(m, -5);
      for (int64_t r = 0; r < rows; ++r)
        math::top_k_row(x.data(), n, c.k, sorted, gv.data(), gi.data(), r);
      for (size_t j = 0; j < m; ++j) {
        ASSERT_EQ(gi[j], ri[j]) << j;
        ASSERT_EQ(0, std::memcmp(&gv[j], &rv[j], sizeof(float))) << j;  // NaN too
      }
      if (sorted) EXPECT_EQ(gi[0], 1);  // the NaN comes first
    }
  // By hand: (1, 3, 3, 0, 3), k 3: values 3 3 3 at 1 2 4; k 4 unsorted: 1 3 3 3 at 0 1 2 4.
  const float x[5] = {1, 3, 3, 0, 3};
  float v[4];
  int64_t i[4];
  math::top_k_row(x, 5, 3, true, v, i, 0);
  EXPECT_EQ(i[0], 1);
  EXPECT_EQ(i[1], 2);
  EXPECT_EQ(i[2], 4);
  math::top_k_row(x, 5, 4, false, v, i, 0);
  EXPECT_EQ(i[0], 0);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(i[3], 4);
}

}  // namespace
}  // namespace dlrt::cuda::math

namespace dlrt::cuda::math {
namespace {

// reduce.cu's split plan: chunks cover the group exactly, in order, none empty; few outputs
// get many blocks, many outputs one chunk each (a single pass).
TEST(SplitPlan, CoversEachGroupInOrderWithEnoughBlocks) {
  struct Case {
    int64_t outputs, group;
  };
  for (Case c : {Case{1, 1000000}, Case{32, 32 * 28 * 28}, Case{64, 4096}, Case{5000, 7},
                 Case{1, 1}, Case{3, 2049}, Case{1024, 100000}}) {
    const SplitPlan p = split_plan(c.outputs, c.group);
    ASSERT_GE(p.splits, 1);
    int64_t covered = 0;
    for (int64_t s = 0; s < p.splits; ++s) {
      EXPECT_EQ(split_begin(p, s), covered) << c.outputs << "x" << c.group << " chunk " << s;
      const int64_t n = split_end(p, s, c.group) - split_begin(p, s);
      EXPECT_GT(n, 0) << c.outputs << "x" << c.group << " chunk " << s << " is empty";
      covered += n;
    }
    EXPECT_EQ(covered, c.group) << c.outputs << "x" << c.group;
    if (p.splits > 1) EXPECT_GE(p.chunk, 2048) << "a second pass only for chunks worth a block";
  }
  // A full reduction of 1M elements: hundreds of blocks instead of one.
  EXPECT_EQ(split_plan(1, 1000000).splits, 488);
  // bias_add_grad of a (32,28,28,32) gradient: 32 outputs of 25,088 -> 12 chunks each.
  EXPECT_EQ(split_plan(32, 32 * 28 * 28).splits, 12);
  // Enough outputs already fill the GPU: one pass.
  EXPECT_EQ(split_plan(1024, 100000).splits, 1);
  EXPECT_EQ(split_plan(5000, 7).splits, 1);
  EXPECT_EQ(split_plan(4, 0).splits, 1);
}

// The two passes' order on the host: chunk partials combined in chunk order give the same
// bits on every evaluation, and agree with a plain double sum to rounding.
TEST(SplitPlan, TwoPassSumIsFixedAndClose) {
  std::vector<float> x(1000000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 2654435761u) % 1000) / 997.0f - 0.5f;
  auto two_pass = [&](const SplitPlan& p) {
    std::vector<double> partial(p.splits, 0.0);
    for (int64_t s = 0; s < p.splits; ++s)
      for (int64_t g = split_begin(p, s); g < split_end(p, s, int64_t(x.size())); ++g)
        partial[s] += x[g];
    double acc = partial[0];
    for (int64_t s = 1; s < p.splits; ++s) acc += partial[s];
    return acc;
  };
  const SplitPlan p = split_plan(1, int64_t(x.size()));
  double plain = 0;
  for (float v : x) plain += v;
  const double a = two_pass(p), b = two_pass(split_plan(1, int64_t(x.size())));
  EXPECT_EQ(a, b);
  EXPECT_NEAR(a, plain, 1e-6 * x.size());
}

// ---- elu, gelu, silu, hard_swish, softplus, clip, abs, square, rsqrt --------------------

// |got - ref| <= tol * max(1, |ref|), NaN matching NaN and infinities exactly.
void expect_close(float got, float ref, const std::string& what, float tol = 2e-6f) {
  if (std::isnan(ref)) EXPECT_TRUE(std::isnan(got)) << what;
  else if (std::isinf(ref)) EXPECT_EQ(got, ref) << what;
  else EXPECT_NEAR(got, ref, tol * std::max(1.0f, std::fabs(ref))) << what;
}

struct EltwiseCase {
  const char* name;  // the forward op; "<name>_grad" is its backward op (when `backward`)
  float (*forward)(float x, math::EltwiseParams p);
  float (*backward)(float dy, float x, math::EltwiseParams p);  // nullptr: no backward op
  AttrMap attrs;
  math::EltwiseParams params;
};

// Each forward op and backward op against the reference kernels (double), on x covering every
// piece (hard_swish's |x| > 3, clip's bounds, large |x| for softplus/silu) and the kinks 0, +-3.
TEST(KernelMath, ActivationsMatchReference) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = random_floats(96, 21, -6.f, 6.f);
  const float edges[] = {0.0f, -3.0f, 3.0f, -100.0f, 100.0f, -0.5f, 0.75f, -1.0f, 1.0f, 20.0f};
  std::copy(std::begin(edges), std::end(edges), x.begin());
  const auto dy = random_floats(96, 22);
  const std::vector<int64_t> dims = {96};
  const std::vector<EltwiseCase> cases = {
      {"elu", math::Elu::forward, math::Elu::backward, {}, {1.0f, -inf, inf}},
      {"elu", math::Elu::forward, math::Elu::backward, {{"alpha", 0.5}}, {0.5f, -inf, inf}},
      {"gelu", math::Gelu::forward, math::Gelu::backward, {}, {}},
      {"gelu",
       math::Gelu::forward,
       math::Gelu::backward,
       {{"approximate", "tanh"}},
       {1.0f, -inf, inf, true}},
      {"silu", math::Silu::forward, math::Silu::backward, {}, {}},
      {"hard_swish", math::HardSwish::forward, math::HardSwish::backward, {}, {}},
      {"softplus", math::Softplus::forward, math::Softplus::backward, {}, {}},
      {"mish", math::Mish::forward, math::Mish::backward, {}, {}},
      {"clip", math::Clip::forward, math::Clip::backward, {}, {}},
      {"clip",
       math::Clip::forward,
       math::Clip::backward,
       {{"min", -0.5}, {"max", 0.75}},
       {1.0f, -0.5f, 0.75f}},
      {"clip",
       math::Clip::forward,
       math::Clip::backward,
       {{"min", 1.0}, {"max", -1.0}},
       {1.0f, 1.0f, -1.0f}},
      {"abs", math::Abs::forward, math::Abs::backward, {}, {}},
      {"square", math::Square::forward, nullptr, {}, {}},
      {"rsqrt", math::Rsqrt::forward, nullptr, {}, {}},
  };
  for (const EltwiseCase& c : cases) {
    SCOPED_TRACE(c.name + (c.attrs.empty() ? std::string() : " with attributes"));
    std::vector<float> y(96), dx(96);
    reference_run(make(c.name, {{DLRT_F32, dims}}, c.attrs), {x.data()}, {y.data()});
    if (c.backward != nullptr)
      reference_run(
          make(std::string(c.name) + "_grad", {{DLRT_F32, dims}, {DLRT_F32, dims}}, c.attrs),
          {dy.data(), x.data()}, {dx.data()});
    for (int i = 0; i < 96; ++i) {
      const std::string at = " at x = " + std::to_string(x[i]);
      expect_close(c.forward(x[i], c.params), y[i], "forward" + at);
      if (c.backward != nullptr)
        expect_close(c.backward(dy[i], x[i], c.params), dx[i], "backward" + at);
    }
  }
}

// batch_norm_train's running statistics as batch_norm.cc has cuDNN move them (factor =
// 1 - momentum, the variance unbiased; one value per channel: cudnnAddTensor and
// cudnnScaleTensor with the count-1 rule) against the reference kernel, for both momentum sides and the zero-variance case.
TEST(KernelMath, BatchNormRunningStatsMatchReference) {
  struct Case {
    std::vector<int64_t> x;
    const char* format;
    double momentum;
  };
  const Case cases[] = {{{2, 3, 5, 7}, "NCHW", 0.9},
                        {{2, 5, 7, 3}, "NHWC", 0.99},
                        {{6, 10}, "NHWC", 0.1},
                        {{1, 1, 1, 5}, "NHWC", 0.9}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.format);
    const bool nchw = std::string(k.format) == "NCHW" && k.x.size() == 4;
    const int64_t c = nchw ? k.x[1] : k.x.back();
    int64_t numel = 1;
    for (int64_t d : k.x) numel *= d;
    const int64_t count = numel / c;
    const int64_t inner = nchw ? k.x[2] * k.x[3] : 1;
    auto x = random_floats(size_t(numel), 31);
    auto scale = random_floats(size_t(c), 32, 0.5f, 1.5f), bias = random_floats(size_t(c), 33);
    auto rm = random_floats(size_t(c), 34), rv = random_floats(size_t(c), 35, 0.5f, 2.f);
    const TensorType cv{DLRT_F32, {c}};
    auto inst = make("batch_norm_train", {{DLRT_F32, k.x}, cv, cv, cv, cv},
                     {{"data_format", k.format}, {"momentum", k.momentum}});
    std::vector<float> y(static_cast<size_t>(numel)), rm_out(static_cast<size_t>(c)),
        rv_out(static_cast<size_t>(c)), mean(static_cast<size_t>(c)),
        inv_std(static_cast<size_t>(c));
    reference_run(inst, {x.data(), scale.data(), bias.data(), rm.data(), rv.data()},
                  {y.data(), rm_out.data(), rv_out.data(), mean.data(), inv_std.data()});
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < numel; ++i)
        if ((i / inner) % c == ch) sum += x[size_t(i)];
      const double m = sum / double(count);
      for (int64_t i = 0; i < numel; ++i)
        if ((i / inner) % c == ch) sq += (x[size_t(i)] - m) * (x[size_t(i)] - m);
      const float var = float(sq / double(count));
      const double f = math::bn_average_factor(k.momentum);
      float want_mean, want_var;
      if (count > 1) {  // cuDNN's own update
        want_mean = math::bn_running(rm[size_t(ch)], float(m), f);
        want_var = math::bn_running(rv[size_t(ch)], math::bn_unbiased_var(var, count), f);
      } else {  // cuDNN gets no running stats; cudnnAddTensor / cudnnScaleTensor move them
        EXPECT_FLOAT_EQ(math::bn_running(rv[size_t(ch)], 0.f, f),
                        float(k.momentum * double(rv[size_t(ch)])));
        want_mean = float((1 - k.momentum) * double(mean[size_t(ch)]) +
                          k.momentum * double(rm[size_t(ch)]));
        want_var = float(k.momentum * double(rv[size_t(ch)]));
        EXPECT_EQ(math::bn_unbiased_var(0.f, 1), 0.f);
      }
      EXPECT_NEAR(want_mean, rm_out[size_t(ch)], 1e-5) << ch;
      EXPECT_NEAR(want_var, rv_out[size_t(ch)], 1e-5) << ch;
      // cuDNN's resultSaveInvVariance is 1/sqrt(biased var + epsilon): saved_inv_std.
      EXPECT_NEAR(1.0 / std::sqrt(double(var) + 1e-5), inv_std[size_t(ch)],
                  1e-5 * inv_std[size_t(ch)]);
    }
  }
}

// The fused ReLU of batch_norm.cc: batch_norm_train with activation relu is cuDNN's pass
// then math::activate(kRelu) in place; batch_norm_relu_grad is cuDNN's backward pass
// (batch_norm_grad) on dy masked by math::bn_relu_dy (x as (outer, C, inner): channel
// (i/inner)%C). Both against the reference's fused ops, NHWC, NCHW and (N,C).
TEST(KernelMath, BatchNormFusedReluIsTheUnfusedOpsAroundTheMask) {
  struct Case {
    std::vector<int64_t> x;
    const char* format;
  };
  const Case cases[] = {{{2, 3, 5, 7}, "NCHW"}, {{2, 5, 7, 3}, "NHWC"}, {{6, 10}, "NHWC"}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.format);
    const bool nchw = std::string(k.format) == "NCHW" && k.x.size() == 4;
    const int64_t c = nchw ? k.x[1] : k.x.back();
    const int64_t inner = nchw ? k.x[2] * k.x[3] : 1;
    int64_t numel = 1;
    for (int64_t d : k.x) numel *= d;
    const size_t n = size_t(numel), cn = size_t(c);
    const TensorType xt{DLRT_F32, k.x}, cv{DLRT_F32, {c}};
    auto x = random_floats(n, 41), dy = random_floats(n, 42, -1.f, 1.f);
    auto scale = random_floats(cn, 43, 0.5f, 1.5f), bias = random_floats(cn, 44, -1.f, 1.f);
    auto rm = random_floats(cn, 45), rv = random_floats(cn, 46, 0.5f, 2.f);
    // Forward: fused == relu(unfused), element for element.
    std::vector<float> y(n), y_relu(n), rm_out(cn), rv_out(cn), mean(cn), inv_std(cn);
    reference_run(make("batch_norm_train", {xt, cv, cv, cv, cv}, {{"data_format", k.format}}),
                  {x.data(), scale.data(), bias.data(), rm.data(), rv.data()},
                  {y.data(), rm_out.data(), rv_out.data(), mean.data(), inv_std.data()});
    reference_run(make("batch_norm_train", {xt, cv, cv, cv, cv},
                       {{"data_format", k.format}, {"activation", "relu"}}),
                  {x.data(), scale.data(), bias.data(), rm.data(), rv.data()},
                  {y_relu.data(), rm_out.data(), rv_out.data(), mean.data(), inv_std.data()});
    size_t cut = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(math::activate(math::Act::kRelu, y[i]), y_relu[i]) << i;
      cut += y_relu[i] == 0.f;
    }
    EXPECT_GT(cut, n / 8);  // the ReLU cuts part of the values...
    EXPECT_LT(cut, n - n / 8);  // ...not all
    // Backward: batch_norm_grad of the masked dy == batch_norm_relu_grad.
    std::vector<float> masked(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t ch = size_t((int64_t(i) / inner) % c);
      masked[i] = math::bn_relu_dy(dy[i], x[i], scale[ch], bias[ch], mean[ch], inv_std[ch]);
    }
    std::vector<float> dx(n), dscale(cn), dbias(cn), want_dx(n), want_dscale(cn), want_dbias(cn);
    reference_run(make("batch_norm_grad", {xt, xt, cv, cv, cv}, {{"data_format", k.format}}),
                  {masked.data(), x.data(), scale.data(), mean.data(), inv_std.data()},
                  {dx.data(), dscale.data(), dbias.data()});
    reference_run(make("batch_norm_relu_grad", {xt, xt, cv, cv, cv, cv}, {{"data_format", k.format}}),
                  {dy.data(), x.data(), scale.data(), bias.data(), mean.data(), inv_std.data()},
                  {want_dx.data(), want_dscale.data(), want_dbias.data()});
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(dx[i], want_dx[i], 1e-5) << i;
    for (size_t i = 0; i < cn; ++i) {
      EXPECT_NEAR(dscale[i], want_dscale[i], 1e-5) << i;
      EXPECT_NEAR(dbias[i], want_dbias[i], 1e-5) << i;
    }
  }
}

// The residual tail as batch_norm.cc runs it: batch_norm_add_relu_train is cuDNN's
// batch_norm_train pass, then math::bn_add_relu(y, residual) per element; its backward is
// dresidual = act_grad(kRelu, dy, y), then batch_norm_grad on dresidual. Both against the
// reference's fused ops, NCHW, NHWC and (N,C).
TEST(KernelMath, BatchNormAddReluIsBatchNormThenAddReluAroundTheMask) {
  struct Case {
    std::vector<int64_t> x;
    const char* format;
  };
  const Case cases[] = {{{2, 3, 5, 7}, "NCHW"}, {{2, 5, 7, 3}, "NHWC"}, {{6, 10}, "NHWC"}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.format);
    int64_t numel = 1;
    for (int64_t d : k.x) numel *= d;
    const int64_t c = std::string(k.format) == "NCHW" && k.x.size() == 4 ? k.x[1] : k.x.back();
    const size_t n = size_t(numel), cn = size_t(c);
    const TensorType xt{DLRT_F32, k.x}, cv{DLRT_F32, {c}};
    const AttrMap df = {{"data_format", k.format}};
    auto x = random_floats(n, 51), res = random_floats(n, 52, -1.f, 1.f);
    auto dy = random_floats(n, 53, -1.f, 1.f);
    auto scale = random_floats(cn, 54, 0.5f, 1.5f), bias = random_floats(cn, 55, -1.f, 1.f);
    auto rm = random_floats(cn, 56), rv = random_floats(cn, 57, 0.5f, 2.f);
    // Forward: cuDNN's pass, then the add-relu kernel's arithmetic.
    std::vector<float> y(n), rm1(cn), rv1(cn), mean(cn), inv_std(cn);
    reference_run(make("batch_norm_train", {xt, cv, cv, cv, cv}, df),
                  {x.data(), scale.data(), bias.data(), rm.data(), rv.data()},
                  {y.data(), rm1.data(), rv1.data(), mean.data(), inv_std.data()});
    std::vector<float> want(n), rm2(cn), rv2(cn), mean2(cn), inv_std2(cn);
    reference_run(make("batch_norm_add_relu_train", {xt, xt, cv, cv, cv, cv}, df),
                  {x.data(), res.data(), scale.data(), bias.data(), rm.data(), rv.data()},
                  {want.data(), rm2.data(), rv2.data(), mean2.data(), inv_std2.data()});
    size_t cut = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(math::bn_add_relu(y[i], res[i]), want[i], 1e-5) << i;
      cut += want[i] == 0.f;
    }
    EXPECT_GT(cut, n / 8);      // the ReLU cuts part of the values...
    EXPECT_LT(cut, n - n / 8);  // ...not all
    for (size_t i = 0; i < cn; ++i) {
      EXPECT_EQ(rm1[i], rm2[i]);
      EXPECT_EQ(rv1[i], rv2[i]);
      EXPECT_EQ(inv_std[i], inv_std2[i]);
    }
    // Backward: the mask kernel's dresidual, then batch_norm_grad on it.
    std::vector<float> dres(n);
    for (size_t i = 0; i < n; ++i) dres[i] = math::act_grad(math::ActGrad::kRelu, dy[i], want[i]);
    std::vector<float> dx(n), dscale(cn), dbias(cn);
    reference_run(make("batch_norm_grad", {xt, xt, cv, cv, cv}, df),
                  {dres.data(), x.data(), scale.data(), mean.data(), inv_std.data()},
                  {dx.data(), dscale.data(), dbias.data()});
    std::vector<float> want_dx(n), want_dscale(cn), want_dbias(cn), want_dres(n);
    reference_run(make("batch_norm_add_relu_grad", {xt, xt, xt, cv, cv, cv}, df),
                  {dy.data(), want.data(), x.data(), scale.data(), mean.data(), inv_std.data()},
                  {want_dx.data(), want_dscale.data(), want_dbias.data(), want_dres.data()});
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(dres[i], want_dres[i]) << i;
      EXPECT_NEAR(dx[i], want_dx[i], 1e-5) << i;
    }
    for (size_t i = 0; i < cn; ++i) {
      EXPECT_NEAR(dscale[i], want_dscale[i], 1e-5) << i;
      EXPECT_NEAR(dbias[i], want_dbias[i], 1e-5) << i;
    }
  }
}

// conv2d_backward_data_add as conv.cc runs it: cuDNN's backward-data pass with beta = 1 on dx
// holding the addend, or (a grown image) the pass cropped, then math::binary(kAdd) per
// element: both are the addend plus conv2d_backward_data, against the reference's fused op.
TEST(KernelMath, ConvBackwardDataAddIsThePassPlusTheAddend) {
  const std::vector<int64_t> x = {2, 6, 6, 3}, w = {3, 3, 3, 4};
  for (const char* padding : {"VALID", "SAME"}) {
    SCOPED_TRACE(padding);
    AttrMap attrs = {{"padding", padding}, {"input_shape", ops::Ints(x.begin(), x.end())}};
    const std::vector<int64_t> y = std::string(padding) == "SAME" ? std::vector<int64_t>{2, 6, 6, 4}
                                                                  : std::vector<int64_t>{2, 4, 4, 4};
    const TensorType yt{DLRT_F32, y}, wt{DLRT_F32, w}, xt{DLRT_F32, x};
    size_t nx = 1, ny = 1, nw = 1;
    for (int64_t d : x) nx *= size_t(d);
    for (int64_t d : y) ny *= size_t(d);
    for (int64_t d : w) nw *= size_t(d);
    auto dy = random_floats(ny, 61, -1.f, 1.f), wv = random_floats(nw, 62, -1.f, 1.f);
    auto addend = random_floats(nx, 63, -1.f, 1.f);
    std::vector<float> dx(nx), want(nx);
    reference_run(make("conv2d_backward_data", {yt, wt}, attrs), {dy.data(), wv.data()},
                  {dx.data()});
    reference_run(make("conv2d_backward_data_add", {yt, wt, xt}, attrs),
                  {dy.data(), wv.data(), addend.data()}, {want.data()});
    for (size_t i = 0; i < nx; ++i)
      EXPECT_NEAR(math::binary(math::Binary::kAdd, dx[i], addend[i]), want[i],
                  1e-5 * (1 + std::fabs(want[i])))
          << i;
  }
}

// max_pool2d_backward_relu_bias as pool.cc runs it: the pool backward kernel's dx with
// math::act_grad(kRelu, dx, x) per cell, then the per-channel sum (bias_add_grad's
// reduction), against the reference's fused op; 2x2 NHWC and 3x3/2 SAME NCHW.
TEST(KernelMath, MaxPoolBackwardReluBiasIsTheMaskedPoolGradient) {
  struct Case {
    std::vector<int64_t> x, y;
    AttrMap attrs;
  };
  const Case cases[] = {
      {{2, 6, 6, 3}, {2, 3, 3, 3}, {}},
      {{1, 2, 7, 7}, {1, 2, 4, 4},
       {{"data_format", "NCHW"}, {"ksize", ops::Ints{3, 3}}, {"padding", "SAME"}}},
  };
  for (const Case& k : cases) {
    const bool nchw = k.attrs.count("data_format") > 0;  // the NCHW case names it
    const int64_t c = nchw ? k.x[1] : k.x[3];
    int64_t n = 1, ny = 1;
    for (int64_t d : k.x) n *= d;
    for (int64_t d : k.y) ny *= d;
    auto x = random_floats(size_t(n), 51, -3.f, 0.5f), dy = random_floats(size_t(ny), 52);
    std::vector<float> dx(static_cast<size_t>(n)), dz(static_cast<size_t>(n)),
        db(static_cast<size_t>(c));
    reference_run(make("max_pool2d_backward", {{DLRT_F32, k.x}, {DLRT_F32, k.y}}, k.attrs),
                  {x.data(), dy.data()}, {dx.data()});
    reference_run(make("max_pool2d_backward_relu_bias", {{DLRT_F32, k.x}, {DLRT_F32, k.y}}, k.attrs),
                  {x.data(), dy.data()}, {dz.data(), db.data()});
    std::vector<double> sum(size_t(c), 0.0);
    const int64_t inner = nchw ? k.x[2] * k.x[3] : 1;
    size_t cut = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float want = math::act_grad(math::ActGrad::kRelu, dx[size_t(i)], x[size_t(i)]);
      EXPECT_EQ(want, dz[size_t(i)]) << i;
      cut += dx[size_t(i)] != 0.f && want == 0.f;
      sum[size_t((i / inner) % c)] += double(want);
    }
    EXPECT_GT(cut, 0u);  // some window's winner was cut
    for (int64_t ch = 0; ch < c; ++ch) EXPECT_NEAR(sum[size_t(ch)], db[size_t(ch)], 1e-5) << ch;
  }
}

// Values known independently of the reference kernels (PyTorch's results, rounded to f32).
TEST(KernelMath, ActivationsKnownValues) {
  const math::EltwiseParams none{};
  math::EltwiseParams tanh_form{};
  tanh_form.tanh_form = true;
  EXPECT_NEAR(math::Gelu::forward(1.0f, none), 0.8413447f, 1e-6f);
  EXPECT_NEAR(math::Gelu::forward(1.0f, tanh_form), 0.8411920f, 1e-6f);
  EXPECT_NEAR(math::Silu::forward(1.0f, none), 0.7310586f, 1e-6f);
  EXPECT_NEAR(math::Elu::forward(-1.0f, none), -0.6321206f, 1e-6f);
  EXPECT_NEAR(math::Softplus::forward(0.0f, none), 0.6931472f, 1e-6f);
  EXPECT_EQ(math::Softplus::forward(100.0f, none), 100.0f);  // no overflow
  EXPECT_EQ(math::Softplus::forward(-200.0f, none), 0.0f);
  EXPECT_NEAR(math::Mish::forward(1.0f, none), 0.8650984f, 1e-6f);
  EXPECT_NEAR(math::Mish::forward(-1.0f, none), -0.3034015f, 1e-6f);
  EXPECT_EQ(math::Mish::forward(100.0f, none), 100.0f);              // no overflow
  EXPECT_NEAR(math::Mish::backward(1.0f, 0.0f, none), 0.6f, 1e-6f);  // tanh(log 2) = 3/5
  EXPECT_EQ(math::HardSwish::forward(1.0f, none), 4.0f / 6.0f);
  EXPECT_EQ(math::HardSwish::forward(-4.0f, none), 0.0f);
  EXPECT_EQ(math::HardSwish::backward(1.0f, -3.0f, none), -0.5f);
  EXPECT_EQ(math::HardSwish::backward(1.0f, 3.0f, none), 1.5f);
  EXPECT_EQ(math::Abs::backward(1.0f, 0.0f, none), 0.0f);
  EXPECT_EQ(math::Rsqrt::forward(4.0f, none), 0.5f);
  const math::EltwiseParams clip{1.0f, -1.0f, 2.0f};
  EXPECT_EQ(math::Clip::backward(1.0f, -1.0f, clip), 1.0f);  // bound passes
  EXPECT_EQ(math::Clip::backward(1.0f, 2.5f, clip), 0.0f);
  EXPECT_TRUE(std::isnan(math::Clip::forward(NAN, clip)));
}

// maximum/minimum/pow through the broadcasting view, and the comparisons and where, against
// the reference kernels; integer-valued operands so ties and exact powers occur.
TEST(KernelMath, BinaryCompareWhereMatchReference) {
  const std::vector<int64_t> da = {3, 1, 5}, db = {4, 1}, dc = {3, 4, 5};
  auto a = random_floats(15, 23, -3.f, 3.f), b = random_floats(4, 24, -3.f, 3.f);
  for (auto* v : {&a, &b})
    for (float& f : *v) f = std::round(f);
  a[0] = NAN;
  const math::Strided view = broadcast_view(da, db, dc, "test");
  struct B {
    const char* name;
    math::Binary op;
  };
  for (const B& bin : {B{"maximum", math::Binary::kMax}, B{"minimum", math::Binary::kMin},
                       B{"pow", math::Binary::kPow}}) {
    std::vector<float> ref(60);
    reference_run(make(bin.name, {{DLRT_F32, da}, {DLRT_F32, db}}), {a.data(), b.data()},
                  {ref.data()});
    for (int64_t i = 0; i < 60; ++i) {
      int64_t oa, ob;
      math::source_offsets(view, i, &oa, &ob);
      expect_close(math::binary(bin.op, a[oa], b[ob]), ref[i], bin.name, 1e-6f);
    }
  }
  struct C {
    const char* name;
    math::Compare op;
  };
  for (const C& c : {C{"equal", math::Compare::kEq}, C{"not_equal", math::Compare::kNe},
                     C{"less", math::Compare::kLt}, C{"less_equal", math::Compare::kLe},
                     C{"greater", math::Compare::kGt}, C{"greater_equal", math::Compare::kGe}}) {
    std::vector<uint8_t> ref(60);
    reference_run(make(c.name, {{DLRT_F32, da}, {DLRT_F32, db}}), {a.data(), b.data()},
                  {ref.data()});
    for (int64_t i = 0; i < 60; ++i) {
      int64_t oa, ob;
      math::source_offsets(view, i, &oa, &ob);
      EXPECT_EQ(math::compare(c.op, a[oa], b[ob]), ref[i]) << c.name << " " << i;
    }
  }
  // where(cond (3,1,5), x (4,1), y (5)) -> (3,4,5), as create_where builds its two views.
  std::vector<uint8_t> cond(15);
  for (size_t i = 0; i < cond.size(); ++i) cond[i] = uint8_t(a[i] > 0);
  const std::vector<int64_t> dy = {5};
  auto y = random_floats(5, 25);
  std::vector<float> ref(60);
  reference_run(make("where", {{DLRT_BOOL, da}, {DLRT_F32, db}, {DLRT_F32, dy}}),
                {cond.data(), b.data(), y.data()}, {ref.data()});
  const math::Strided cx = broadcast_view(da, db, dc, "where");
  const math::Strided yv = broadcast_view(dy, dy, dc, "where");
  for (int64_t i = 0; i < 60; ++i) {
    int64_t oc, ox;
    math::source_offsets(cx, i, &oc, &ox);
    EXPECT_EQ(math::select(cond[oc], b[ox], y[math::source_offset(yv, 0, i)]), ref[i]) << i;
  }
}

// gather and scatter_add: gather_word and scatter_add_thread (the kernels' per-thread code)
// against the reference on repeated ids, rank-2 ids, one row, and rows longer than the thread
// target; scatter_add gives the same bits for every band split (determinism does not hang
// on the launch shape) and skips out-of-range ids, where gather gives zero words.
TEST(KernelMath, GatherAndScatterAddMatchReference) {
  struct Case {
    std::vector<int64_t> ids_dims;
    int64_t rows, row_len;
  };
  const Case cases[] = {{{7}, 10, 3}, {{4, 5}, 3, 6}, {{12}, 1, 2}, {{3, 8}, 40, 17},
                        {{50}, 7, 1}};
  std::mt19937 rng(5);
  for (const Case& k : cases)
    for (dlrt_dtype it : {DLRT_I32, DLRT_I64}) {
      SCOPED_TRACE(ops::format_dims(k.ids_dims) + " rows " + std::to_string(k.rows) + " x " +
                   std::to_string(k.row_len));
      const int64_t n = ops::num_elements(k.ids_dims);
      std::vector<int64_t> ids64(static_cast<size_t>(n));
      for (auto& v : ids64) v = std::uniform_int_distribution<int64_t>(0, k.rows - 1)(rng);
      std::vector<int32_t> ids32(ids64.begin(), ids64.end());
      const void* ids = it == DLRT_I64 ? static_cast<const void*>(ids64.data()) : ids32.data();

      auto params = random_floats(size_t(k.rows * k.row_len), 31);
      auto g = make("gather", {{DLRT_F32, {k.rows, k.row_len}}, {it, k.ids_dims}});
      std::vector<float> ref(size_t(n * k.row_len));
      reference_run(g, {params.data(), ids}, {ref.data()});
      for (int64_t i = 0; i < n * k.row_len; ++i) {
        const float v = it == DLRT_I64
                            ? math::gather_word(params.data(), ids64.data(), k.rows, k.row_len, i)
                            : math::gather_word(params.data(), ids32.data(), k.rows, k.row_len, i);
        ASSERT_EQ(v, ref[size_t(i)]) << i;
      }

      std::vector<int64_t> upd_dims = k.ids_dims;
      upd_dims.push_back(k.row_len);
      auto upd = random_floats(size_t(n * k.row_len), 32);
      auto s = make("scatter_add", {{it, k.ids_dims}, {DLRT_F32, upd_dims}},
                    {{"num_rows", k.rows}});
      std::vector<float> sref(size_t(k.rows * k.row_len));
      reference_run(s, {ids, upd.data()}, {sref.data()});
      std::vector<float> first;
      for (int64_t target : {int64_t(1), int64_t(7), int64_t(16384)}) {
        const math::ScatterGeom geo = math::scatter_geom(k.rows, k.row_len, n, target);
        ASSERT_GE(geo.chunks * geo.band, k.rows);
        std::vector<float> got(sref.size(), 123.0f);  // every cell must be written
        for (int64_t t = 0; t < math::scatter_threads(geo); ++t) {
          if (it == DLRT_I64)
            math::scatter_add_thread(geo, ids64.data(), upd.data(), got.data(), t);
          else math::scatter_add_thread(geo, ids32.data(), upd.data(), got.data(), t);
        }
        for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], sref[j], 1e-5) << j;
        if (first.empty()) first = got;
        else EXPECT_EQ(0, std::memcmp(first.data(), got.data(), got.size() * sizeof(float)));
      }
    }
  // Out of range: gather's zero word, scatter_add's skipped row.
  const float params[4] = {1, 2, 3, 4};  // (2, 2)
  const int32_t bad[3] = {1, -1, 2};
  EXPECT_EQ(math::gather_word(params, bad, 2, 2, 0), 3.0f);
  EXPECT_EQ(math::gather_word(params, bad, 2, 2, 2), 0.0f);
  EXPECT_EQ(math::gather_word(params, bad, 2, 2, 5), 0.0f);
  const float upd[6] = {1, 1, 5, 5, 7, 7};
  float out[4] = {9, 9, 9, 9};
  const math::ScatterGeom geo = math::scatter_geom(2, 2, 3);
  for (int64_t t = 0; t < math::scatter_threads(geo); ++t) math::scatter_add_thread(geo, bad, upd, out, t);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[2], 1.0f);
}

// layer_norm and layer_norm_grad: the blocks' lane partials, fixed tree and per-element
// formulas (ln_*) replayed on the host as layer_norm.cu runs them, against the reference;
// D below, at and well above the 256 lanes, and D = 1.
TEST(KernelMath, LayerNormMatchesReference) {
  constexpr int kLanes = 256;
  for (const ops::Dims& dims : {ops::Dims{3, 1}, ops::Dims{2, 3, 13}, ops::Dims{4, 256},
                                ops::Dims{2, 2100}}) {
    SCOPED_TRACE(ops::format_dims(dims));
    const int64_t d = dims.back(), rows = ops::num_elements(dims) / d;
    const double eps = 1e-5;
    auto x = random_floats(size_t(rows * d), 11), dy = random_floats(size_t(rows * d), 12);
    auto gamma = random_floats(size_t(d), 13, 0.5f, 1.5f), beta = random_floats(size_t(d), 14);
    // forward
    auto inst = make("layer_norm", {{DLRT_F32, dims}, {DLRT_F32, {d}}, {DLRT_F32, {d}}});
    std::vector<float> y(x.size()), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
    reference_run(inst, {x.data(), gamma.data(), beta.data()}, {y.data(), mean.data(), rstd.data()});
    std::vector<double> s(kLanes);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * d;
      for (int t = 0; t < kLanes; ++t) s[size_t(t)] = math::ln_lane_sum(xr, d, t, kLanes, 0, false);
      const double m = math::ln_tree_combine_host(s.data(), kLanes) / double(d);
      for (int t = 0; t < kLanes; ++t) s[size_t(t)] = math::ln_lane_sum(xr, d, t, kLanes, m, true);
      const double rs = math::ln_rstd(math::ln_tree_combine_host(s.data(), kLanes), d, eps);
      EXPECT_NEAR(float(m), mean[size_t(r)], 1e-6);
      EXPECT_NEAR(float(rs), rstd[size_t(r)], 1e-5 * rstd[size_t(r)]);
      for (int64_t j = 0; j < d; ++j)
        EXPECT_NEAR((xr[j] - float(m)) * float(rs) * gamma[size_t(j)] + beta[size_t(j)],
                    y[size_t(r * d + j)], 1e-5);
    }
    // backward, from the saved statistics
    auto ginst = make("layer_norm_grad", {{DLRT_F32, dims}, {DLRT_F32, dims}, {DLRT_F32, {d}},
                                           {DLRT_F32, ops::Dims(dims.begin(), dims.end() - 1)},
                                           {DLRT_F32, ops::Dims(dims.begin(), dims.end() - 1)}});
    std::vector<float> dx(x.size()), dg(static_cast<size_t>(d)), db(static_cast<size_t>(d));
    reference_run(ginst, {dy.data(), x.data(), gamma.data(), mean.data(), rstd.data()},
                  {dx.data(), dg.data(), db.data()});
    for (int64_t r = 0; r < rows; ++r) {
      const double m = mean[size_t(r)], rs = rstd[size_t(r)];
      double sum_g = 0, sum_gx = 0;
      for (int64_t j = 0; j < d; ++j) {
        const double g = double(dy[size_t(r * d + j)]) * double(gamma[size_t(j)]);
        sum_g += g;
        sum_gx += g * (double(x[size_t(r * d + j)]) - m) * rs;
      }
      for (int64_t j = 0; j < d; ++j) {
        const size_t k = size_t(r * d + j);
        EXPECT_NEAR(math::ln_dx(dy[k], x[k], gamma[size_t(j)], m, rs, d, sum_g, sum_gx), dx[k],
                    1e-5);
      }
    }
    std::vector<float> hg(static_cast<size_t>(d)), hb(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j)
      math::ln_param_grads(dy.data(), x.data(), mean.data(), rstd.data(), rows, d, j, hg.data(),
                           hb.data());
    for (int64_t j = 0; j < d; ++j) {
      EXPECT_NEAR(hg[size_t(j)], dg[size_t(j)], 1e-5);
      EXPECT_NEAR(hb[size_t(j)], db[size_t(j)], 1e-5);
    }
  }
}


// lstm_cell and lstm_cell_grad: the per-element gate functions (lstm_cell_at,
// lstm_cell_grad_at) run over every element on the host as rnn.cu runs them after its GEMM
// (z computed here in double, as cuBLASLt's f32 accumulation would to rounding), against
// the reference; H = 1, odd H, several B.
TEST(KernelMath, LstmCellMatchesReference) {
  for (const auto& [bsz, h] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {4, 16}}) {
    SCOPED_TRACE("B " + std::to_string(bsz) + " H " + std::to_string(h));
    const size_t n = size_t(bsz * h), n4 = 4 * n;
    auto zx = random_floats(n4, 21), hs = random_floats(n, 22, -1.f, 1.f);
    auto c = random_floats(n, 23), u = random_floats(size_t(4 * h * h), 24, -0.5f, 0.5f);
    auto inst = make("lstm_cell", {{DLRT_F32, {bsz, 4 * h}}, {DLRT_F32, {bsz, h}},
                                   {DLRT_F32, {bsz, h}}, {DLRT_F32, {h, 4 * h}}});
    std::vector<float> h2(n), c2(n), act(n4);
    reference_run(inst, {zx.data(), hs.data(), c.data(), u.data()},
                  {h2.data(), c2.data(), act.data()});
    std::vector<float> z(n4), mh(n), mc(n);
    for (int64_t b = 0; b < bsz; ++b)
      for (int64_t j = 0; j < 4 * h; ++j) {
        double acc = zx[size_t(b * 4 * h + j)];
        for (int64_t k = 0; k < h; ++k)
          acc += double(hs[size_t(b * h + k)]) * double(u[size_t(k * 4 * h + j)]);
        z[size_t(b * 4 * h + j)] = float(acc);
      }
    for (int64_t k = 0; k < bsz * h; ++k) math::lstm_cell_at(z.data(), c.data(), mc.data(), mh.data(), h, k);
    for (size_t k = 0; k < n; ++k) {
      EXPECT_NEAR(mh[k], h2[k], 1e-5) << k;
      EXPECT_NEAR(mc[k], c2[k], 1e-5) << k;
    }
    for (size_t k = 0; k < n4; ++k) EXPECT_NEAR(z[k], act[k], 1e-5) << k;

    // backward from the reference's saved state
    auto dh = random_floats(n, 25, -1.f, 1.f), dcn = random_floats(n, 26, -1.f, 1.f);
    auto ginst = make("lstm_cell_grad", {{DLRT_F32, {bsz, h}}, {DLRT_F32, {bsz, h}},
                                         {DLRT_F32, {bsz, h}}, {DLRT_F32, {bsz, h}},
                                         {DLRT_F32, {bsz, 4 * h}}});
    std::vector<float> dz(n4), dc(n), mdz(n4), mdc(n);
    reference_run(ginst, {dh.data(), dcn.data(), c.data(), c2.data(), act.data()},
                  {dz.data(), dc.data()});
    for (int64_t k = 0; k < bsz * h; ++k)
      math::lstm_cell_grad_at(dh.data(), dcn.data(), c.data(), c2.data(), act.data(), mdz.data(),
                              mdc.data(), h, k);
    for (size_t k = 0; k < n4; ++k) EXPECT_NEAR(mdz[k], dz[k], 1e-5) << k;
    for (size_t k = 0; k < n; ++k) EXPECT_NEAR(mdc[k], dc[k], 1e-5) << k;
  }
}

// attention: attention.cu's forward (scores a chunk of keys at a time, the online softmax of
// attn_online_rescale, o = acc / l, lse = attn_lse) and its two backward kernels (dq over the
// keys a row sees; dk, dv over the rows that see a key, attn_first_query) replayed on the host
// with a small chunk (several chunks per row) and the device's 128, against the reference.
TEST(KernelMath, AttentionMatchesReference) {
  struct Case {
    ops::Dims batch;
    int64_t tq, tk, d, dv;
    int64_t causal;
    double scale;
  };
  for (const Case& t : {Case{{2, 3}, 5, 5, 4, 4, 0, 0.0}, Case{{3}, 4, 7, 8, 8, 1, 0.0},
                        Case{{2}, 1, 9, 8, 3, 1, 0.5}, Case{{1}, 33, 40, 16, 12, 1, 0.0},
                        Case{{2}, 9, 4, 4, 4, 0, 0.0}, Case{{1}, 200, 300, 8, 8, 1, 0.0}})
    for (int64_t chunk : {int64_t{3}, int64_t{128}}) {
      SCOPED_TRACE("tq " + std::to_string(t.tq) + " tk " + std::to_string(t.tk) + " chunk " +
                   std::to_string(chunk));
      int64_t heads = 1;
      for (int64_t b : t.batch) heads *= b;
      auto dims = [&](std::initializer_list<int64_t> tail) {
        ops::Dims d = t.batch;
        d.insert(d.end(), tail);
        return d;
      };
      const ops::AttrMap attrs = {{"causal", t.causal}, {"scale", t.scale}};
      const std::vector<TensorType> qkv = {{DLRT_F32, dims({t.tq, t.d})},
                                           {DLRT_F32, dims({t.tk, t.d})},
                                           {DLRT_F32, dims({t.tk, t.dv})}};
      auto inst = make("attention", qkv, attrs);
      const float scale = t.scale != 0 ? float(t.scale) : float(1.0 / std::sqrt(double(t.d)));
      const bool causal = t.causal != 0;
      auto q = random_floats(size_t(heads * t.tq * t.d), 21, -1, 1);
      auto k = random_floats(size_t(heads * t.tk * t.d), 22, -1, 1);
      auto v = random_floats(size_t(heads * t.tk * t.dv), 23, -1, 1);
      auto dout = random_floats(size_t(heads * t.tq * t.dv), 24, -1, 1);
      std::vector<float> o(dout.size()), lse(size_t(heads * t.tq));
      reference_run(inst, {q.data(), k.data(), v.data()}, {o.data(), lse.data()});
      // forward, as attention_kernel runs one row
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < t.tq; ++i) {
          const float* qi = q.data() + (h * t.tq + i) * t.d;
          const int64_t n = attn_key_end(i, t.tq, t.tk, causal);
          AttnOnline st = attn_online_init();
          std::vector<float> acc(size_t(t.dv), 0.f);
          std::vector<float> s(static_cast<size_t>(chunk));
          for (int64_t j0 = 0; j0 < n; j0 += chunk) {
            const int64_t cn = std::min(chunk, n - j0);
            float cmax = -INFINITY;
            for (int64_t jj = 0; jj < cn; ++jj) {
              s[size_t(jj)] = scale * attn_dot(qi, k.data() + (h * t.tk + j0 + jj) * t.d, t.d);
              cmax = std::max(cmax, s[size_t(jj)]);
            }
            const float alpha = attn_online_rescale(st, cmax);
            for (auto& a : acc) a *= alpha;
            for (int64_t jj = 0; jj < cn; ++jj) {
              const float p = expf(s[size_t(jj)] - st.m);
              st.l += p;
              for (int64_t c = 0; c < t.dv; ++c)
                acc[size_t(c)] += p * v[size_t((h * t.tk + j0 + jj) * t.dv + c)];
            }
          }
          const int64_t r = h * t.tq + i;
          EXPECT_NEAR(attn_lse(st), lse[size_t(r)], 1e-5 * std::max(1.f, std::fabs(lse[size_t(r)])));
          for (int64_t c = 0; c < t.dv; ++c)
            EXPECT_NEAR(acc[size_t(c)] / st.l, o[size_t(r * t.dv + c)], 2e-5);
        }
      // backward
      auto ginst = make("attention_grad",
                        {{DLRT_F32, dims({t.tq, t.dv})}, qkv[0], qkv[1], qkv[2],
                         {DLRT_F32, dims({t.tq, t.dv})}, {DLRT_F32, dims({t.tq})}},
                        attrs);
      std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
      reference_run(ginst, {dout.data(), q.data(), k.data(), v.data(), o.data(), lse.data()},
                    {dq.data(), dk.data(), dv.data()});
      auto pair = [&](int64_t h, int64_t i, int64_t j, float* p_out) {
        const float* qi = q.data() + (h * t.tq + i) * t.d;
        const float* doi = dout.data() + (h * t.tq + i) * t.dv;
        const float p = attn_prob(scale * attn_dot(qi, k.data() + (h * t.tk + j) * t.d, t.d),
                                  lse[size_t(h * t.tq + i)]);
        const float delta = attn_dot(doi, o.data() + (h * t.tq + i) * t.dv, t.dv);
        *p_out = p;
        return attn_ds(p, attn_dot(doi, v.data() + (h * t.tk + j) * t.dv, t.dv), delta, scale);
      };
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t i = 0; i < t.tq; ++i)
          for (int64_t c = 0; c < t.d; ++c) {
            float a = 0, p;
            for (int64_t j = 0; j < attn_key_end(i, t.tq, t.tk, causal); ++j)
              a += pair(h, i, j, &p) * k[size_t((h * t.tk + j) * t.d + c)];
            EXPECT_NEAR(a, dq[size_t((h * t.tq + i) * t.d + c)], 5e-5);
          }
        for (int64_t j = 0; j < t.tk; ++j) {
          std::vector<float> a_k(size_t(t.d), 0.f), a_v(size_t(t.dv), 0.f);
          for (int64_t i = attn_first_query(j, t.tq, t.tk, causal); i < t.tq; ++i) {
            float p;
            const float d_s = pair(h, i, j, &p);
            for (int64_t c = 0; c < t.dv; ++c)
              a_v[size_t(c)] += p * dout[size_t((h * t.tq + i) * t.dv + c)];
            for (int64_t c = 0; c < t.d; ++c)
              a_k[size_t(c)] += d_s * q[size_t((h * t.tq + i) * t.d + c)];
          }
          for (int64_t c = 0; c < t.d; ++c)
            EXPECT_NEAR(a_k[size_t(c)], dk[size_t((h * t.tk + j) * t.d + c)], 5e-5);
          for (int64_t c = 0; c < t.dv; ++c)
            EXPECT_NEAR(a_v[size_t(c)], dv[size_t((h * t.tk + j) * t.dv + c)], 5e-5);
        }
      }
    }
}

// causal_keep against the definition j <= i + Tk - Tq, and the key/query ranges.
TEST(KernelMath, CausalKeepAndRanges) {
  const int64_t tq = 3, tk = 5;
  for (int64_t e = 0; e < 2 * tq * tk; ++e) {
    const int64_t i = (e / tk) % tq, j = e % tk;
    EXPECT_EQ(causal_keep(e, tq, tk), j <= i + 2) << e;
  }
  EXPECT_EQ(attn_key_end(0, tq, tk, true), 3);
  EXPECT_EQ(attn_key_end(2, tq, tk, true), 5);
  EXPECT_EQ(attn_key_end(0, tq, tk, false), 5);
  EXPECT_EQ(attn_first_query(0, tq, tk, true), 0);
  EXPECT_EQ(attn_first_query(4, tq, tk, true), 2);
  EXPECT_EQ(attn_first_query(4, tq, tk, false), 0);
}

}  // namespace
}  // namespace dlrt::cuda::math
