// forward_test.cc: the forward ops of docs/ops.md on small cases computed by hand (the values
// in the comments are the arithmetic), plus check_supported's verdicts and the op list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "ops/op_registry.hpp"
#include "test_util.hpp"

namespace {

using dlrt::plugin::Error;
using dlrt::reference::testing::expect_near;
using dlrt::reference::testing::TestOp;
using V = std::vector<float>;

TestOp conv(std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> y,
            const char* padding, std::vector<int64_t> strides = {1, 1},
            const char* format = "NHWC") {
  TestOp t("conv2d");
  t.in(DLRT_F32, x).in(DLRT_F32, w).out(DLRT_F32, y);
  t.ints("strides", strides)
      .str("padding", padding)
      .ints("dilations", {1, 1})
      .str("data_format", format);
  return t;
}

V iota(int n, float start = 0) {
  V v(n);
  for (int i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

// ---- conv2d ------------------------------------------------------------------------------

TEST(Conv2D, ValidTwoByTwoOnThreeByThree) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]]: y00 = 1+4+12+20 = 37, ...
  TestOp t = conv({1, 3, 3, 1}, {2, 2, 1, 1}, {1, 2, 2, 1}, "VALID");
  expect_near(t.run_f32({iota(9, 1), {1, 2, 3, 4}})[0], V{37, 47, 67, 77}, 1e-5);
}

TEST(Conv2D, SameThreeByThreeOnesSumsNeighbours) {
  TestOp t = conv({1, 3, 3, 1}, {3, 3, 1, 1}, {1, 3, 3, 1}, "SAME");
  expect_near(t.run_f32({iota(9, 1), V(9, 1.0f)})[0], V{12, 21, 16, 27, 45, 33, 24, 39, 28}, 1e-5);
}

TEST(Conv2D, SameStrideTwoOnOddSize) {
  // x: 5x5 with x[r][c] = 5r+c; k 3, stride 2 -> out 3, padding 1 before and 1 after.
  TestOp t = conv({1, 5, 5, 1}, {3, 3, 1, 1}, {1, 3, 3, 1}, "SAME", {2, 2});
  V y = t.run_f32({iota(25), V(9, 1.0f)})[0];
  EXPECT_FLOAT_EQ(y[0], 0 + 1 + 5 + 6);      // rows 0..1, cols 0..1
  EXPECT_FLOAT_EQ(y[4], 90 + 18);            // rows 1..3, cols 1..3
  EXPECT_FLOAT_EQ(y[8], 18 + 19 + 23 + 24);  // rows 3..4, cols 3..4
  EXPECT_FLOAT_EQ(y[2], 3 + 4 + 8 + 9);      // rows 0..1, cols 3..4
}

TEST(Conv2D, SameStrideTwoOnEvenSizePadsAfter) {
  // 4 wide, k 2, stride 2, SAME: out 2, total = 2 + 2 - 4 = 0: no padding, plain 2x2 blocks.
  // 6 wide, k 3, stride 2, SAME: out 3, total = 4 + 3 - 6 = 1 -> 0 before, 1 after.
  TestOp t = conv({1, 1, 6, 1}, {1, 3, 1, 1}, {1, 1, 3, 1}, "SAME", {1, 2});
  expect_near(t.run_f32({iota(6), V{1, 10, 100}})[0], V{0 + 10 + 200, 2 + 30 + 400, 4 + 50}, 1e-4);
}

TEST(Conv2D, ChannelsAndNchwAgree) {
  // Two input channels, two output channels, checked entry by entry, NHWC then NCHW.
  // x(0,0,0,:) = (1,2), x(0,0,1,:) = (3,4); w (1,2,2,2) with w[0,j,c,o] = 1 + j*4 + c*2 + o.
  TestOp t = conv({1, 1, 2, 2}, {1, 2, 2, 2}, {1, 1, 1, 2}, "VALID");
  // o=0: 1*1 + 2*3 + 3*5 + 4*7 = 50; o=1: 1*2 + 2*4 + 3*6 + 4*8 = 60
  expect_near(t.run_f32({{1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}})[0], V{50, 60}, 1e-5);
  TestOp n = conv({1, 2, 1, 2}, {1, 2, 2, 2}, {1, 2, 1, 1}, "VALID", {1, 1}, "NCHW");
  // NCHW x: channel 0 = (1,3), channel 1 = (2,4)
  expect_near(n.run_f32({{1, 3, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}})[0], V{50, 60}, 1e-5);
}

TEST(Conv2D, DilationSkipsCells) {
  TestOp t("conv2d");
  t.in(DLRT_F32, {1, 1, 5, 1}).in(DLRT_F32, {1, 2, 1, 1}).out(DLRT_F32, {1, 1, 3, 1});
  t.ints("strides", {1, 1})
      .str("padding", "VALID")
      .ints("dilations", {1, 2})
      .str("data_format", "NHWC");
  expect_near(t.run_f32({iota(5), {1, 10}})[0], V{20, 31, 42}, 1e-5);
}

TEST(Conv2D, BiasActivation) {
  TestOp t("conv2d_bias_act");
  t.in(DLRT_F32, {1, 3, 3, 1})
      .in(DLRT_F32, {2, 2, 1, 1})
      .in(DLRT_F32, {1})
      .out(DLRT_F32, {1, 2, 2, 1});
  t.ints("strides", {1, 1})
      .str("padding", "VALID")
      .ints("dilations", {1, 1})
      .str("data_format", "NHWC");
  t.str("activation", "relu");
  expect_near(t.run_f32({iota(9, 1), {1, 2, 3, 4}, {-50}})[0], V{0, 0, 17, 27}, 1e-5);
}

// ---- pooling -----------------------------------------------------------------------------

TestOp pool(const char* name, std::vector<int64_t> x, std::vector<int64_t> y, const char* padding,
            const char* format = "NHWC") {
  TestOp t(name);
  t.in(DLRT_F32, x).out(DLRT_F32, y);
  t.ints("ksize", {2, 2})
      .ints("strides", {2, 2})
      .str("padding", padding)
      .str("data_format", format);
  return t;
}

TEST(Pool, MaxAndAvgValid) {
  expect_near(pool("max_pool2d", {1, 4, 4, 1}, {1, 2, 2, 1}, "VALID").run_f32({iota(16)})[0],
              V{5, 7, 13, 15}, 0);
  expect_near(pool("avg_pool2d", {1, 4, 4, 1}, {1, 2, 2, 1}, "VALID").run_f32({iota(16)})[0],
              V{2.5, 4.5, 10.5, 12.5}, 1e-6);
}

TEST(Pool, SameOnOddSizePadsAfterAndAvgExcludesPadding) {
  // 3x3 (1..9), k 2, s 2, SAME: out 2, one padding row/col after.
  expect_near(pool("max_pool2d", {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME").run_f32({iota(9, 1)})[0],
              V{5, 6, 8, 9}, 0);
  // avg: (1+2+4+5)/4 = 3, (3+6)/2 = 4.5, (7+8)/2 = 7.5, 9/1 = 9
  expect_near(pool("avg_pool2d", {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME").run_f32({iota(9, 1)})[0],
              V{3, 4.5, 7.5, 9}, 1e-6);
}

TEST(Pool, MaxPoolPaddingIsMinusInfinity) {
  // All-negative input: a padded cell (treated as 0 by a careless kernel) must not win.
  V x = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  expect_near(pool("max_pool2d", {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME").run_f32({x})[0],
              V{-1, -3, -7, -9}, 0);
}

TEST(Pool, NchwPoolsEachChannel) {
  // Two channels of 2x2: channel 0 = 0..3, channel 1 = 10..13.
  expect_near(pool("max_pool2d", {1, 2, 2, 2}, {1, 2, 1, 1}, "VALID", "NCHW")
                  .run_f32({{0, 1, 2, 3, 10, 11, 12, 13}})[0],
              V{3, 13}, 0);
  // Same data read as NHWC: channel 0 = 0,2,10,12; channel 1 = 1,3,11,13
  expect_near(pool("max_pool2d", {1, 2, 2, 2}, {1, 1, 1, 2}, "VALID")
                  .run_f32({{0, 1, 2, 3, 10, 11, 12, 13}})[0],
              V{12, 13}, 0);
}

// ---- matmul ------------------------------------------------------------------------------

TestOp matmul(std::vector<int64_t> a, std::vector<int64_t> b, bool ta, bool tb) {
  TestOp t("matmul");
  t.in(DLRT_F32, a).in(DLRT_F32, b).out(DLRT_F32, {2, 2}).b("transpose_a", ta).b("transpose_b", tb);
  return t;
}

TEST(Matmul, EveryTransposeFlag) {
  // a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]] -> [[58,64],[139,154]]
  const V a = {1, 2, 3, 4, 5, 6}, at = {1, 4, 2, 5, 3, 6};
  const V b = {7, 8, 9, 10, 11, 12}, bt = {7, 9, 11, 8, 10, 12};
  const V c = {58, 64, 139, 154};
  expect_near(matmul({2, 3}, {3, 2}, false, false).run_f32({a, b})[0], c, 1e-4, "nn");
  expect_near(matmul({3, 2}, {3, 2}, true, false).run_f32({at, b})[0], c, 1e-4, "tn");
  expect_near(matmul({2, 3}, {2, 3}, false, true).run_f32({a, bt})[0], c, 1e-4, "nt");
  expect_near(matmul({3, 2}, {2, 3}, true, true).run_f32({at, bt})[0], c, 1e-4, "tt");
}

TEST(Matmul, BiasActivation) {
  TestOp t("matmul_bias_act");
  t.in(DLRT_F32, {2, 3}).in(DLRT_F32, {3, 2}).in(DLRT_F32, {2}).out(DLRT_F32, {2, 2});
  t.b("transpose_a", false).b("transpose_b", false).str("activation", "relu");
  expect_near(t.run_f32({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, {-100, -200}})[0],
              V{0, 0, 39, 0}, 1e-4);
  TestOp s("matmul_bias_act");
  s.in(DLRT_F32, {1, 1}).in(DLRT_F32, {1, 1}).in(DLRT_F32, {1}).out(DLRT_F32, {1, 1});
  s.b("transpose_a", false).b("transpose_b", false).str("activation", "sigmoid");
  expect_near(s.run_f32({{2}, {3}, {-6}})[0], V{0.5f}, 1e-7);
}

// ---- element-wise ------------------------------------------------------------------------

TestOp binary(const char* name, std::vector<int64_t> a, std::vector<int64_t> b,
              std::vector<int64_t> c) {
  TestOp t(name);
  t.in(DLRT_F32, a).in(DLRT_F32, b).out(DLRT_F32, c);
  return t;
}

TEST(Elementwise, BroadcastingBinaryOps) {
  expect_near(binary("add", {2, 3}, {3}, {2, 3}).run_f32({iota(6, 1), {10, 20, 30}})[0],
              V{11, 22, 33, 14, 25, 36}, 0);
  expect_near(binary("mul", {2, 1}, {1, 3}, {2, 3}).run_f32({{1, 2}, {1, 2, 3}})[0],
              V{1, 2, 3, 2, 4, 6}, 0);
  expect_near(binary("sub", {3}, {2, 1}, {2, 3}).run_f32({{1, 2, 3}, {10, 20}})[0],
              V{-9, -8, -7, -19, -18, -17}, 0);
  expect_near(binary("div", {2, 2}, {}, {2, 2}).run_f32({{1, 2, 3, 4}, {2}})[0], V{0.5, 1, 1.5, 2},
              0);
}

TEST(Elementwise, UnaryOps) {
  TestOp t("relu");
  t.in(DLRT_F32, {3}).out(DLRT_F32, {3});
  expect_near(t.run_f32({{-1, 0, 2}})[0], V{0, 0, 2}, 0);
  TestOp s("sigmoid");
  s.in(DLRT_F32, {2}).out(DLRT_F32, {2});
  expect_near(s.run_f32({{0, 2}})[0], V{0.5f, 0.88079708f}, 1e-7);
  TestOp h("tanh");
  h.in(DLRT_F32, {2}).out(DLRT_F32, {2});
  expect_near(h.run_f32({{0, 1}})[0], V{0, 0.76159416f}, 1e-7);
  TestOp n("neg");
  n.in(DLRT_F32, {1}).out(DLRT_F32, {1});
  EXPECT_EQ(n.run_f32({{3}})[0][0], -3);
  TestOp e("exp");
  e.in(DLRT_F32, {1}).out(DLRT_F32, {1});
  EXPECT_FLOAT_EQ(e.run_f32({{1}})[0][0], 2.7182818f);
  TestOp l("log");
  l.in(DLRT_F32, {2}).out(DLRT_F32, {2});
  V lv = l.run_f32({{-1, 1}})[0];
  EXPECT_TRUE(std::isnan(lv[0]));
  EXPECT_EQ(lv[1], 0);
  TestOp q("sqrt");
  q.in(DLRT_F32, {2}).out(DLRT_F32, {2});
  V qv = q.run_f32({{-4, 9}})[0];
  EXPECT_TRUE(std::isnan(qv[0]));
  EXPECT_EQ(qv[1], 3);
}

TEST(Elementwise, BiasAddBothFormats) {
  TestOp t("bias_add");
  t.in(DLRT_F32, {2, 3}).in(DLRT_F32, {3}).out(DLRT_F32, {2, 3}).str("data_format", "NHWC");
  expect_near(t.run_f32({V(6, 0), {1, 2, 3}})[0], V{1, 2, 3, 1, 2, 3}, 0);
  TestOp n("bias_add");
  n.in(DLRT_F32, {1, 2, 1, 2})
      .in(DLRT_F32, {2})
      .out(DLRT_F32, {1, 2, 1, 2})
      .str("data_format", "NCHW");
  expect_near(n.run_f32({V(4, 0), {1, 2}})[0], V{1, 1, 2, 2}, 0);
}

// ---- reductions --------------------------------------------------------------------------

TestOp reduce(const char* name, std::vector<int64_t> x, std::vector<int64_t> y,
              std::vector<int64_t> axes, bool keep) {
  TestOp t(name);
  t.in(DLRT_F32, x).out(DLRT_F32, y).ints("axes", axes).b("keepdims", keep);
  return t;
}

TEST(Reduce, SumMeanMax) {
  const V x = iota(6, 1);  // [[1,2,3],[4,5,6]]
  expect_near(reduce("reduce_sum", {2, 3}, {2}, {1}, false).run_f32({x})[0], V{6, 15}, 0);
  expect_near(reduce("reduce_sum", {2, 3}, {1, 3}, {0}, true).run_f32({x})[0], V{5, 7, 9}, 0);
  expect_near(reduce("reduce_mean", {2, 3}, {}, {}, false).run_f32({x})[0], V{3.5}, 0);
  expect_near(reduce("reduce_max", {2, 3}, {2, 1}, {-1}, true).run_f32({x})[0], V{3, 6}, 0);
  // (2,2,2) over axes 0 and 2: y[j] = sum over i,k of x[i,j,k] (x = 0..7): j=0: 0+1+4+5, j=1: 2+3+6+7
  expect_near(reduce("reduce_sum", {2, 2, 2}, {2}, {0, 2}, false).run_f32({iota(8)})[0], V{10, 18},
              0);
}

TEST(Reduce, BiasAddGrad) {
  TestOp t("bias_add_grad");
  t.in(DLRT_F32, {2, 3}).out(DLRT_F32, {3}).str("data_format", "NHWC");
  expect_near(t.run_f32({iota(6, 1)})[0], V{5, 7, 9}, 0);
  TestOp n("bias_add_grad");
  n.in(DLRT_F32, {2, 2, 1, 2}).out(DLRT_F32, {2}).str("data_format", "NCHW");
  // channel 0: 0,1 (n=0) and 4,5 (n=1) -> 10; channel 1: 2,3,6,7 -> 18
  expect_near(n.run_f32({iota(8)})[0], V{10, 18}, 0);
}

TEST(Reduce, MaxGradSplitsAmongTies) {
  TestOp t("reduce_max_grad");
  t.in(DLRT_F32, {2, 3}).in(DLRT_F32, {2}).in(DLRT_F32, {2}).out(DLRT_F32, {2, 3});
  t.ints("axes", {1}).b("keepdims", false);
  expect_near(t.run_f32({{1, 5, 5, 7, 2, 3}, {5, 7}, {1, 10}})[0], V{0, 0.5, 0.5, 10, 0, 0}, 0);
}

// ---- shapes ------------------------------------------------------------------------------

TEST(Shape, ReshapeFlattenTransposeBroadcast) {
  TestOp r("reshape");
  r.in(DLRT_F32, {2, 3}).out(DLRT_F32, {3, 2}).ints("shape", {-1, 2});
  expect_near(r.run_f32({iota(6)})[0], iota(6), 0);
  TestOp f("flatten");
  f.in(DLRT_F32, {2, 2, 2}).out(DLRT_F32, {2, 4});
  expect_near(f.run_f32({iota(8)})[0], iota(8), 0);
  TestOp t("transpose");
  t.in(DLRT_F32, {2, 3}).out(DLRT_F32, {3, 2}).ints("perm", {1, 0});
  expect_near(t.run_f32({iota(6)})[0], V{0, 3, 1, 4, 2, 5}, 0);
  // (2,3,4) -> perm (2,0,1) -> (4,2,3): y[k,i,j] = x[i,j,k] = 12i + 4j + k
  TestOp t3("transpose");
  t3.in(DLRT_F32, {2, 3, 4}).out(DLRT_F32, {4, 2, 3}).ints("perm", {2, 0, 1});
  V y3 = t3.run_f32({iota(24)})[0];
  EXPECT_EQ(y3[1 * 6 + 1 * 3 + 2], 12 * 1 + 4 * 2 + 1);
  EXPECT_EQ(y3[3 * 6 + 0 * 3 + 1], 4 * 1 + 3);
  TestOp b("broadcast_to");
  b.in(DLRT_F32, {3, 1}).out(DLRT_F32, {2, 3, 2}).ints("shape", {2, 3, 2});
  expect_near(b.run_f32({{1, 2, 3}})[0], V{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, 0);
  TestOp c("copy");
  c.in(DLRT_F32, {3}).out(DLRT_F32, {3});
  expect_near(c.run_f32({{1, 2, 3}})[0], V{1, 2, 3}, 0);
}

// ---- softmax and loss --------------------------------------------------------------------

TEST(Softmax, KnownValues) {
  TestOp s("softmax");
  s.in(DLRT_F32, {1, 3}).out(DLRT_F32, {1, 3}).i("axis", -1);
  expect_near(s.run_f32({{1, 2, 3}})[0], V{0.09003057f, 0.24472847f, 0.66524096f}, 1e-7);
  TestOp l("log_softmax");
  l.in(DLRT_F32, {1, 3}).out(DLRT_F32, {1, 3}).i("axis", -1);
  expect_near(l.run_f32({{1, 2, 3}})[0], V{-2.40760596f, -1.40760596f, -0.40760596f}, 1e-6);
  // Along axis 0 of (2,2): columns (0, ln 3) and (5, 5); huge values stay finite (max-subtracted).
  TestOp a("softmax");
  a.in(DLRT_F32, {2, 2}).out(DLRT_F32, {2, 2}).i("axis", 0);
  expect_near(a.run_f32({{0, 1000, std::log(3.0f), 1000}})[0], V{0.25, 0.5, 0.75, 0.5}, 1e-6);
}

TEST(SparseSoftmaxCrossEntropy, KnownLogits) {
  for (int32_t label_dtype : {DLRT_I32, DLRT_I64}) {
    TestOp t("sparse_softmax_cross_entropy");
    t.in(DLRT_F32, {3, 3}).in(label_dtype, {3}).out(DLRT_F32, {3}).out(DLRT_F32, {3, 3});
    V logits = {1, 2, 3, 1, 1, 1, 0, 0, 0};
    std::vector<int64_t> l64 = {2, 0, 3};  // 3 is out of range
    std::vector<int32_t> l32 = {2, 0, 3};
    V loss(3), backprop(9);
    const void* labels =
        label_dtype == DLRT_I64 ? static_cast<const void*>(l64.data()) : l32.data();
    t.run_raw({logits.data(), labels}, {loss.data(), backprop.data()});
    EXPECT_NEAR(loss[0], 0.40760596, 1e-6);
    EXPECT_NEAR(loss[1], std::log(3.0), 1e-6);
    EXPECT_TRUE(std::isnan(loss[2]));
    expect_near(V(backprop.begin(), backprop.begin() + 6),
                V{0.09003057f, 0.24472847f, 0.66524096f - 1, 1.0f / 3 - 1, 1.0f / 3, 1.0f / 3},
                1e-6);
    for (int j = 6; j < 9; ++j) EXPECT_TRUE(std::isnan(backprop[j]));
  }
}

// ---- misc --------------------------------------------------------------------------------

TEST(Misc, ArgmaxFirstOfTies) {
  TestOp t("argmax");
  t.in(DLRT_F32, {2, 3}).out(DLRT_I64, {2}).i("axis", -1).dtype("output_type", DLRT_I64);
  V x = {1, 7, 7, 9, 2, 9};
  std::vector<int64_t> y(2, -1);
  t.run_raw({x.data()}, {y.data()});
  EXPECT_EQ(y, (std::vector<int64_t>{1, 0}));
  TestOp a0("argmax");
  a0.in(DLRT_F32, {2, 3}).out(DLRT_I32, {3}).i("axis", 0).dtype("output_type", DLRT_I32);
  std::vector<int32_t> y0(3, -1);
  a0.run_raw({x.data()}, {y0.data()});
  EXPECT_EQ(y0, (std::vector<int32_t>{1, 0, 1}));
}

TEST(Misc, EqualCount) {
  TestOp t("equal_count");
  t.in(DLRT_I64, {4}).in(DLRT_I32, {4}).out(DLRT_F32, {});
  std::vector<int64_t> a = {1, 2, 3, 4};
  std::vector<int32_t> b = {1, 0, 3, 4};
  float count = -1;
  t.run_raw({a.data(), b.data()}, {&count});
  EXPECT_EQ(count, 3.0f);
}

TEST(Misc, CastTruncatesAndSaturates) {
  TestOp t("cast");
  t.in(DLRT_F32, {5}).out(DLRT_I32, {5}).dtype("dtype", DLRT_I32);
  V x = {-1.7f, 2.9f, -0.5f, 3e10f, NAN};
  std::vector<int32_t> y(5);
  t.run_raw({x.data()}, {y.data()});
  EXPECT_EQ(y, (std::vector<int32_t>{-1, 2, 0, INT32_MAX, 0}));
  TestOp u("cast");
  u.in(DLRT_U8, {3}).out(DLRT_F32, {3}).dtype("dtype", DLRT_F32);
  std::vector<uint8_t> img = {0, 128, 255};
  V f(3);
  u.run_raw({img.data()}, {f.data()});
  EXPECT_EQ(f, (V{0, 128, 255}));
  TestOp s("cast");
  s.in(DLRT_F32, {3}).out(DLRT_U8, {3}).dtype("dtype", DLRT_U8);
  V big = {300, -5, 7.9f};
  std::vector<uint8_t> b(3);
  s.run_raw({big.data()}, {b.data()});
  EXPECT_EQ(b, (std::vector<uint8_t>{255, 0, 7}));
  TestOp i("cast");
  i.in(DLRT_I64, {1}).out(DLRT_F64, {1}).dtype("dtype", DLRT_F64);
  std::vector<int64_t> l = {(int64_t(1) << 40) + 1};
  std::vector<double> d(1);
  i.run_raw({l.data()}, {d.data()});
  EXPECT_EQ(d[0], double((int64_t(1) << 40) + 1));
}

TEST(Misc, GatherRowsZeroesOutOfRange) {
  TestOp t("gather_rows");
  t.in(DLRT_F32, {3, 2}).in(DLRT_I32, {4}).out(DLRT_F32, {4, 2});
  V params = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> idx = {2, 0, 3, -1};
  V y(8, 99);
  t.run_raw({params.data(), idx.data()}, {y.data()});
  EXPECT_EQ(y, (V{5, 6, 1, 2, 0, 0, 0, 0}));
}

TEST(Misc, Fill) {
  TestOp t("fill");
  t.out(DLRT_I32, {2, 2}).ints("shape", {2, 2}).f("value", 3.0).dtype("dtype", DLRT_I32);
  std::vector<int32_t> y(4);
  t.run_raw({}, {y.data()});
  EXPECT_EQ(y, (std::vector<int32_t>{3, 3, 3, 3}));
  TestOp f("fill");
  f.out(DLRT_F32, {3}).ints("shape", {3}).f("value", -0.25).dtype("dtype", DLRT_F32);
  expect_near(f.run_f32({})[0], V{-0.25, -0.25, -0.25}, 0);
}

// ---- check_supported and the op list ------------------------------------------------------

// What the oracle declines, and why: it answers only what it can run (the schema checked the
// descriptor before it arrives; docs/design.md, "What a plugin may trust").
TEST(CheckSupported, Verdicts) {
  auto code = [](const dlrt::plugin::OpView& v) {
    try {
      dlrt::reference::check_supported(v);
      return DLRT_OK;
    } catch (const Error& e) {
      return e.code();
    }
  };
  TestOp unknown("winograd_conv");
  EXPECT_EQ(code(unknown.raw_view()), DLRT_UNIMPLEMENTED);
  TestOp half("relu");
  half.in(DLRT_F16, {2}).out(DLRT_F16, {2});
  EXPECT_EQ(code(half.view()), DLRT_UNIMPLEMENTED);
  TestOp strided("relu");
  strided.in(DLRT_F32, {2}).out(DLRT_F32, {2});
  dlrt_op_desc d = *strided.desc();
  dlrt_tensor_desc in = *d.inputs[0];
  in.layout = DLRT_LAYOUT_DEVICE_PRIVATE;  // another plugin's private format
  const dlrt_tensor_desc* ins[] = {&in};
  d.inputs = ins;
  EXPECT_EQ(code(dlrt::plugin::OpView(&d)), DLRT_UNIMPLEMENTED);
  TestOp valid = conv({1, 3, 3, 1}, {2, 2, 1, 1}, {1, 2, 2, 1}, "VALID");
  EXPECT_EQ(code(valid.view()), DLRT_OK);
  // A descriptor without explicit pads (a host older than ABI 1.2) is declined, not guessed.
  EXPECT_EQ(code(valid.raw_view()), DLRT_UNIMPLEMENTED);
  TestOp f64("relu");
  f64.in(DLRT_F64, {2}).out(DLRT_F64, {2});
  EXPECT_EQ(code(f64.view()), DLRT_OK);
}

// The reference plugin is the oracle: it has a kernel for every op of the core's op schema
// (no list kept here: a new op without a reference kernel fails).
TEST(KernelNames, EveryOpOfTheSchema) {
  std::set<std::string> schema;
  for (const dlrt::ops::OpDef* d : dlrt::ops::all_ops()) schema.insert(d->name);
  auto names = dlrt::reference::kernel_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), schema);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const auto& n : schema) EXPECT_NE(dlrt::reference::find_kernel(n), nullptr) << n;
  EXPECT_EQ(dlrt::reference::find_kernel("nope"), nullptr);
}

}  // namespace
