// activation_test.cc: the reference kernels of the activations, abs/square/rsqrt, their
// backward ops, maximum/minimum/pow, the comparisons and where, on values worked out by hand
// or taken from PyTorch (the comments say which), so that the oracle the other devices are
// compared with is itself checked against something outside this code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.hpp"

namespace {

using dlrt::reference::testing::expect_near;
using dlrt::reference::testing::TestOp;
using V = std::vector<float>;
const float kInf = std::numeric_limits<float>::infinity();

// One f32 op on x (n elements) -> y.
TestOp unary(const char* name, int64_t n) {
  TestOp t(name);
  t.in(DLRT_F32, {n}).out(DLRT_F32, {n});
  return t;
}
TestOp backward(const char* name, int64_t n) {
  TestOp t(name);
  t.in(DLRT_F32, {n}).in(DLRT_F32, {n}).out(DLRT_F32, {n});
  return t;
}

TEST(Activations, EluGeluSilu) {
  // elu(-1) = e^-1 - 1 = -0.6321206; alpha 2 doubles the negative part.
  expect_near(unary("elu", 3).f("alpha", 1.0).run_f32({{-1, 0, 2}})[0], V{-0.6321206f, 0, 2}, 1e-6);
  expect_near(unary("elu", 1).f("alpha", 2.0).run_f32({{-1}})[0], V{-1.2642411f}, 1e-6);
  // PyTorch: gelu(1) = 0.8413447, gelu(-1) = -0.1586553; tanh form gelu(1) = 0.8411920.
  expect_near(unary("gelu", 2).str("approximate", "none").run_f32({{1, -1}})[0],
              V{0.8413447f, -0.1586553f}, 1e-6);
  expect_near(unary("gelu", 1).str("approximate", "tanh").run_f32({{1}})[0], V{0.8411920f}, 1e-6);
  // silu(1) = 1 / (1 + e^-1) = 0.7310586; silu(-100) is -100 * 3.7e-44, 0 in f32's normal range.
  expect_near(unary("silu", 2).run_f32({{1, -100}})[0], V{0.7310586f, 0}, 1e-6);
}

TEST(Activations, HardSwishSoftplusClip) {
  // x * relu6(x + 3) / 6: -4 -> 0, -1.5 -> -1.5 * 1.5 / 6, 1 -> 4/6, 4 -> 4.
  expect_near(unary("hard_swish", 4).run_f32({{-4, -1.5f, 1, 4}})[0], V{0, -0.375f, 0.6666667f, 4},
              1e-6);
  // softplus(0) = log 2; large magnitudes do not overflow: 100 -> 100, -100 -> ~0.
  expect_near(unary("softplus", 3).run_f32({{0, 100, -100}})[0], V{0.6931472f, 100, 0}, 1e-6);
  TestOp c = unary("clip", 5);
  c.f("min", -1.0).f("max", 0.5);
  expect_near(c.run_f32({{-3, -1, 0.25f, 0.5f, 9}})[0], V{-1, -1, 0.25f, 0.5f, 0.5f}, 0);
  TestOp inverted = unary("clip", 3);
  inverted.f("min", 1.0).f("max", -1.0);  // min > max: every element is max
  expect_near(inverted.run_f32({{-3, 0, 3}})[0], V{-1, -1, -1}, 0);
  TestOp open = unary("clip", 2);
  open.f("min", -kInf).f("max", kInf);
  EXPECT_TRUE(std::isnan(open.run_f32({{NAN, 1}})[0][0]));  // NaN stays NaN
}

TEST(Activations, Mish) {
  // PyTorch's torch.nn.functional.mish: mish(1) = 0.8650984, mish(-1) = -0.3034015; far out it
  // is x itself (20) or x e^x (-20: -4.1223e-08), with no overflow at -100 or 100.
  expect_near(unary("mish", 6).run_f32({{1, -1, 0, 20, -20, 100}})[0],
              V{0.8650984f, -0.3034015f, 0, 20, -4.122307e-08f, 100}, 1e-6);
  // mish'(0) = tanh(log 2) = 3/5 exactly; mish'(1) = 1.049036 (PyTorch's autograd).
  expect_near(backward("mish_grad", 2).run_f32({{2, 1}, {0, 1}})[0], V{1.2f, 1.049036f}, 1e-6);
}

TEST(Activations, AbsSquareRsqrt) {
  expect_near(unary("abs", 3).run_f32({{-2, 0, 3}})[0], V{2, 0, 3}, 0);
  expect_near(unary("square", 2).run_f32({{-3, 0.5f}})[0], V{9, 0.25f}, 0);
  const V r = unary("rsqrt", 3).run_f32({{4, 0, -1}})[0];
  EXPECT_EQ(r[0], 0.5f);
  EXPECT_EQ(r[1], kInf);
  EXPECT_TRUE(std::isnan(r[2]));
}

TEST(Activations, BackwardOps) {
  const V dy = {2, 2, 2, 2, 2};
  // elu' = 1 above 0, alpha * e^x below: e^-1 * 2 * 0.5 = 0.3678794.
  TestOp elu = backward("elu_grad", 2);
  elu.f("alpha", 0.5);
  expect_near(elu.run_f32({{2, 2}, {-1, 3}})[0], V{0.3678794f, 2}, 1e-6);
  // gelu'(0) = 0.5 in both forms; gelu'(1) = Phi(1) + phi(1) = 0.8413447 + 0.2419707.
  TestOp g = backward("gelu_grad", 2);
  g.str("approximate", "none");
  expect_near(g.run_f32({{1, 1}, {0, 1}})[0], V{0.5f, 1.0833154f}, 1e-6);
  TestOp gt = backward("gelu_grad", 1);
  gt.str("approximate", "tanh");
  expect_near(gt.run_f32({{1}, {0}})[0], V{0.5f}, 1e-6);
  // silu'(0) = 0.5; softplus'(0) = sigmoid(0) = 0.5.
  expect_near(backward("silu_grad", 1).run_f32({{2}, {0}})[0], V{1}, 1e-6);
  expect_near(backward("softplus_grad", 1).run_f32({{2}, {0}})[0], V{1}, 1e-6);
  // hard_swish' (PyTorch): 0 below -3, (2x+3)/6 on [-3, 3] (-0.5 at -3, 1.5 at 3), 1 above.
  expect_near(backward("hard_swish_grad", 5).run_f32({dy, {-4, -3, 0, 3, 4}})[0], V{0, -1, 1, 3, 2},
              1e-6);
  // clip passes dy on [min, max], bounds included.
  TestOp c = backward("clip_grad", 5);
  c.f("min", -1.0).f("max", 1.0);
  expect_near(c.run_f32({dy, {-2, -1, 0, 1, 2}})[0], V{0, 2, 2, 2, 0}, 0);
  // abs' = sign(x), 0 at 0.
  expect_near(backward("abs_grad", 3).run_f32({{2, 2, 2}, {-1, 0, 1}})[0], V{-2, 0, 2}, 0);
}

TEST(Elementwise, MaximumMinimumPowBroadcast) {
  // a (2,1) against b (3): rows a0 = 1, a1 = -2 against b = (0, 1, 2).
  auto binary = [](const char* name) {
    TestOp t(name);
    t.in(DLRT_F32, {2, 1}).in(DLRT_F32, {3}).out(DLRT_F32, {2, 3});
    return t;
  };
  expect_near(binary("maximum").run_f32({{1, -2}, {0, 1, 2}})[0], V{1, 1, 2, 0, 1, 2}, 0);
  expect_near(binary("minimum").run_f32({{1, -2}, {0, 1, 2}})[0], V{0, 1, 1, -2, -2, -2}, 0);
  // pow: 1^b = 1; (-2)^0 = 1, (-2)^1 = -2, (-2)^2 = 4.
  expect_near(binary("pow").run_f32({{1, -2}, {0, 1, 2}})[0], V{1, 1, 1, 1, -2, 4}, 0);
  const V nan_max = binary("maximum").run_f32({{NAN, 0}, {0, 1, 2}})[0];
  EXPECT_TRUE(std::isnan(nan_max[0]) && std::isnan(nan_max[2]));  // NaN wins, as in NumPy
  TestOp p("pow");
  p.in(DLRT_F32, {2}).in(DLRT_F32, {2}).out(DLRT_F32, {2});
  const V q = p.run_f32({{0, -8}, {-1, 1.0f / 3}})[0];
  EXPECT_EQ(q[0], kInf);          // 0 ** -1
  EXPECT_TRUE(std::isnan(q[1]));  // negative base, non-integer exponent
}

TEST(Compare, ComparisonsAndWhere) {
  // a (3) = (1, 2, NaN) against b () = 2.
  const V a = {1, 2, NAN}, b = {2};
  const std::pair<const char*, std::vector<uint8_t>> cases[] = {
      {"equal", {0, 1, 0}},      {"not_equal", {1, 0, 1}}, {"less", {1, 0, 0}},
      {"less_equal", {1, 1, 0}}, {"greater", {0, 0, 0}},   {"greater_equal", {0, 1, 0}},
  };
  for (const auto& [name, want] : cases) {
    TestOp t(name);
    t.in(DLRT_F32, {3}).in(DLRT_F32, {}).out(DLRT_BOOL, {3});
    std::vector<uint8_t> c(3, 7);
    t.run_raw({a.data(), b.data()}, {c.data()});
    EXPECT_EQ(c, want) << name;
  }
  // where(cond (2,1), x (3), y ()) -> (2,3)
  const std::vector<uint8_t> cond = {1, 0};
  const V x = {1, 2, 3}, y = {-1};
  TestOp w("where");
  w.in(DLRT_BOOL, {2, 1}).in(DLRT_F32, {3}).in(DLRT_F32, {}).out(DLRT_F32, {2, 3});
  V z(6);
  w.run_raw({cond.data(), x.data(), y.data()}, {z.data()});
  EXPECT_EQ(z, (V{1, 2, 3, -1, -1, -1}));
}

}  // namespace
