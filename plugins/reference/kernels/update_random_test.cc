// update_random_test.cc: the optimizer updates (one step against Keras' formulas worked out by
// hand, in place as the executor runs them), the random ops (reproducible for equal
// (seed, rng_offset), different otherwise, exactly the Philox stream of philox.hpp), dropout's
// mask, and run()'s handling of aliased buffers.
#include <gtest/gtest.h>

#include <cmath>

#include "philox.hpp"
#include "test_util.hpp"

namespace {

using dlrt::reference::testing::TestOp;
using V = std::vector<float>;
using D = std::vector<double>;

// ---- SGD ---------------------------------------------------------------------------------

// learning_rate is the last input (version 2): the runs below feed it.
TestOp sgd(double momentum, bool nesterov, int64_t n = 1) {
  TestOp t("sgd_update");
  t.in(DLRT_F64, {n}).in(DLRT_F64, {n}).in(DLRT_F64, {n}).in(DLRT_F64, {});
  t.out(DLRT_F64, {n}).out(DLRT_F64, {n});
  t.f("momentum", momentum).b("nesterov", nesterov);
  return t;
}

TEST(SgdUpdate, OneStepKerasFormulas) {
  // p = 1, g = 0.5, v = 0.2, lr = 0.1, momentum = 0.9: v = 0.9*0.2 - 0.1*0.5 = 0.13
  auto out = sgd(0.9, false).run_f64({{1.0}, {0.5}, {0.2}, {0.1}});
  EXPECT_NEAR(out[0][0], 1.13, 1e-12);  // p += v
  EXPECT_NEAR(out[1][0], 0.13, 1e-12);
  out = sgd(0.9, true).run_f64({{1.0}, {0.5}, {0.2}, {0.1}});
  EXPECT_NEAR(out[0][0], 1.0 + 0.9 * 0.13 - 0.05, 1e-12);  // p += momentum*v - lr*g = 1.067
  EXPECT_NEAR(out[1][0], 0.13, 1e-12);
  out = sgd(0.0, false).run_f64({{1.0}, {0.5}, {0.2}, {0.1}});
  EXPECT_NEAR(out[0][0], 0.95, 1e-12);  // momentum 0: p -= lr*g
}

TEST(SgdUpdate, InPlaceOnAliasedBuffers) {
  TestOp t = sgd(0.9, false, 2);
  D p = {1.0, -1.0}, g = {0.5, 1.0}, v = {0.2, 0.0}, lr = {0.1};
  t.run_raw({p.data(), g.data(), v.data(), lr.data()}, {p.data(), v.data()});
  EXPECT_NEAR(p[0], 1.13, 1e-12);
  EXPECT_NEAR(v[0], 0.13, 1e-12);
  EXPECT_NEAR(p[1], -1.1, 1e-12);
  EXPECT_NEAR(v[1], -0.1, 1e-12);
  // The kernel alone (no scratch from run()) is in-place safe too.
  D p2 = {1.0, -1.0}, v2 = {0.2, 0.0};
  const void* ins[] = {p2.data(), g.data(), v2.data(), lr.data()};
  void* outs[] = {p2.data(), v2.data()};
  dlrt::reference::find_kernel("sgd_update")(t.view(), ins, outs, 0);
  EXPECT_EQ(p2, p);
  EXPECT_EQ(v2, v);
}

// ---- Adam --------------------------------------------------------------------------------

// step and learning_rate are the last two inputs: the runs below feed them.
TestOp adam(int64_t n = 1) {
  TestOp t("adam_update");
  for (int k = 0; k < 4; ++k) t.in(DLRT_F64, {n});
  t.in(DLRT_F64, {}).in(DLRT_F64, {});
  for (int k = 0; k < 3; ++k) t.out(DLRT_F64, {n});
  t.f("beta1", 0.9).f("beta2", 0.999).f("epsilon", 1e-7);
  return t;
}

TEST(AdamUpdate, FirstStepKerasFormulas) {
  // m = 0.1*0.5 = 0.05, v = 0.001*0.25 = 0.00025, lr_t = 0.001*sqrt(0.001)/0.1,
  // p = 1 - lr_t*0.05/(sqrt(0.00025) + 1e-7) = 0.99900000632...
  auto out = adam().run_f64({{1.0}, {0.5}, {0.0}, {0.0}, {1.0}, {0.001}});
  EXPECT_NEAR(out[0][0], 0.9990000063245154, 1e-15);
  EXPECT_NEAR(out[1][0], 0.05, 1e-15);
  EXPECT_NEAR(out[2][0], 0.00025, 1e-15);
}

TEST(AdamUpdate, SecondStepInPlace) {
  // step 2, lr 0.01, p = 2, g = -1, m = 0.1, v = 0.01 -> m = -0.01, v = 0.01099,
  // p = 2 - 0.01*sqrt(1-0.999^2)/(1-0.9^2) * -0.01/(sqrt(0.01099)+1e-7) = 2.000224467534...
  TestOp t = adam();
  D p = {2.0}, g = {-1.0}, m = {0.1}, v = {0.01}, step = {2.0}, lr = {0.01};
  t.run_raw({p.data(), g.data(), m.data(), v.data(), step.data(), lr.data()},
            {p.data(), m.data(), v.data()});
  EXPECT_NEAR(p[0], 2.0002244675340988, 1e-14);
  EXPECT_NEAR(m[0], -0.01, 1e-15);
  EXPECT_NEAR(v[0], 0.01099, 1e-15);
}

TEST(AdamUpdate, F32Works) {
  TestOp t("adam_update");
  for (int k = 0; k < 4; ++k) t.in(DLRT_F32, {1});
  t.in(DLRT_F32, {}).in(DLRT_F32, {});
  for (int k = 0; k < 3; ++k) t.out(DLRT_F32, {1});
  t.f("beta1", 0.9).f("beta2", 0.999).f("epsilon", 1e-7);
  auto out = t.run_f32({{1}, {0.5}, {0}, {0}, {1}, {0.001}});
  EXPECT_NEAR(out[0][0], 0.999, 1e-6);
}

// ---- aliasing in general ------------------------------------------------------------------

TEST(Run, AliasedOutputGetsScratch) {
  // transpose in place would read elements it already overwrote; run() must give it scratch.
  TestOp t("transpose");
  t.in(DLRT_F32, {2, 3}).out(DLRT_F32, {3, 2}).ints("perm", {1, 0});
  V x = {0, 1, 2, 3, 4, 5};
  t.run_raw({x.data()}, {x.data()});
  EXPECT_EQ(x, (V{0, 3, 1, 4, 2, 5}));
  // u8 -> f32 cast where the output overlaps the input's bytes.
  TestOp c("cast");
  c.in(DLRT_U8, {4}).out(DLRT_F32, {4}).dtype("dtype", DLRT_F32);
  V buf(4);
  auto* bytes = reinterpret_cast<uint8_t*>(buf.data());
  bytes[0] = 1, bytes[1] = 2, bytes[2] = 3, bytes[3] = 250;
  c.run_raw({bytes}, {buf.data()});
  EXPECT_EQ(buf, (V{1, 2, 3, 250}));
}

// ---- random ops --------------------------------------------------------------------------

TestOp uniform(uint64_t seed, int64_t n, double lo = 0.0, double hi = 1.0) {
  TestOp t("random_uniform");
  t.out(DLRT_F32, {n})
      .ints("shape", {n})
      .f("minval", lo)
      .f("maxval", hi)
      .i("seed", int64_t(seed))
      .dtype("dtype", DLRT_F32);
  return t;
}

TEST(Random, UniformIsThePhiloxStreamAndReproducible) {
  const int64_t n = 1001;
  V a = uniform(42, n, -2.0, 3.0).run_f32({}, 7)[0];
  V b = uniform(42, n, -2.0, 3.0).run_f32({}, 7)[0];
  V other_offset = uniform(42, n, -2.0, 3.0).run_f32({}, 8)[0];
  V other_seed = uniform(43, n, -2.0, 3.0).run_f32({}, 7)[0];
  EXPECT_EQ(a, b);
  int same_offset = 0, same_seed = 0;
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) {
    same_offset += a[i] == other_offset[i];
    same_seed += a[i] == other_seed[i];
    EXPECT_GE(a[i], -2.0f);
    EXPECT_LT(a[i], 3.0f);
    EXPECT_EQ(a[i], float(-2.0 + 5.0 * double(dlrt::philox::uniform(42, 7, uint64_t(i))))) << i;
    mean += a[i];
  }
  EXPECT_LT(same_offset, 5);
  EXPECT_LT(same_seed, 5);
  EXPECT_NEAR(mean / n, 0.5, 0.15);
}

TEST(Random, NormalIsBoxMullerOfThePhiloxStream) {
  const int64_t n = 4000;
  TestOp t("random_normal");
  t.out(DLRT_F64, {n})
      .ints("shape", {n})
      .f("mean", 1.0)
      .f("stddev", 2.0)
      .i("seed", 5)
      .dtype("dtype", DLRT_F64);
  D a = t.run_f64({}, 3)[0];
  D b = t.run_f64({}, 3)[0];
  D c = t.run_f64({}, 4)[0];
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a[i], 1.0 + 2.0 * dlrt::philox::normal(5, 3, uint64_t(i)));
    sum += a[i];
    sq += (a[i] - 1.0) * (a[i] - 1.0);
  }
  EXPECT_NEAR(sum / n, 1.0, 0.1);
  EXPECT_NEAR(std::sqrt(sq / n), 2.0, 0.1);
}

TEST(Random, DropoutMaskScalesKeptElements) {
  const int64_t n = 2000;
  const double rate = 0.25;
  TestOp t("dropout");
  t.in(DLRT_F32, {n}).out(DLRT_F32, {n}).out(DLRT_F32, {n}).f("rate", rate).i("seed", 9);
  V x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = float(i % 7) - 3.0f;
  auto out = t.run_f32({x}, 11);
  const float keep = float(1.0 / (1.0 - rate));
  int kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool k = double(dlrt::philox::uniform(9, 11, uint64_t(i))) >= rate;
    ASSERT_EQ(out[1][i], k ? keep : 0.0f) << i;
    ASSERT_EQ(out[0][i], x[i] * out[1][i]) << i;
    kept += k;
  }
  EXPECT_NEAR(double(kept) / n, 0.75, 0.05);
  EXPECT_EQ(t.run_f32({x}, 11), out);
  EXPECT_NE(t.run_f32({x}, 12)[1], out[1]);
  // rate 0 keeps everything with mask 1.
  TestOp z("dropout");
  z.in(DLRT_F32, {3}).out(DLRT_F32, {3}).out(DLRT_F32, {3}).f("rate", 0.0).i("seed", 1);
  auto zo = z.run_f32({{1, 2, 3}});
  EXPECT_EQ(zo[0], (V{1, 2, 3}));
  EXPECT_EQ(zo[1], (V{1, 1, 1}));
}

}  // namespace
