// gradient_test.cc: every backward op against central finite differences of its forward op.
// For a forward f and a random cotangent r, L(x) = <f(x), r>; the backward op given dy = r must
// return dL/dx, which we estimate as (L(x + h e_i) - L(x - h e_i)) / 2h for every element i.
// The tests run in f64 so the estimate is good to ~1e-9 and the tolerance (1e-5 relative to
// scale) can catch a gradient that is off by a single term.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <functional>
#include <ostream>
#include <random>

#include "ops/shape_util.hpp"
#include "test_util.hpp"

namespace {

using dlrt::reference::testing::TestOp;
using D = std::vector<double>;
using Inputs = std::vector<D>;
using Forward = std::function<D(const Inputs&)>;

D random_vec(size_t n, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  D v(n);
  for (double& x : v) x = u(rng);
  return v;
}

size_t numel(const std::vector<int64_t>& dims) {
  return static_cast<size_t>(dlrt::plugin::product(dims));
}

double dot(const D& a, const D& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// dL/d inputs[which] for L = <f(inputs), r>, by central differences.
D numeric_grad(const Forward& f, Inputs inputs, size_t which, const D& r, double h = 1e-6) {
  D g(inputs[which].size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double x0 = inputs[which][i];
    inputs[which][i] = x0 + h;
    const double up = dot(f(inputs), r);
    inputs[which][i] = x0 - h;
    const double down = dot(f(inputs), r);
    inputs[which][i] = x0;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// max|analytic - numeric| <= tol * max(1, max|numeric|), per element in the message.
void expect_grad(const D& analytic, const D& numeric, const char* what, double tol = 1e-5) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  double scale = 1.0, nonzero = 0.0;
  for (double v : numeric) scale = std::max(scale, std::fabs(v)), nonzero += std::fabs(v);
  ASSERT_GT(nonzero, 0.0) << what
                          << ": the numeric gradient is all zero; the test would prove nothing";
  for (size_t i = 0; i < numeric.size(); ++i)
    EXPECT_NEAR(analytic[i], numeric[i], tol * scale) << what << " [" << i << "]";
}

// ---- conv2d ------------------------------------------------------------------------------

struct ConvCase {
  const char* padding;
  int64_t stride;
  const char* format;
  int64_t dilation;
  int64_t h, w, kh, kw;
};

std::ostream& operator<<(std::ostream& os, const ConvCase& c) {
  return os << c.padding << " stride " << c.stride << " " << c.format << " dilation " << c.dilation
            << " x " << c.h << "x" << c.w << " k " << c.kh << "x" << c.kw;
}

class ConvGrad : public ::testing::TestWithParam<ConvCase> {};

void conv_attrs(TestOp& t, const ConvCase& c) {
  t.ints("strides", {c.stride, c.stride})
      .str("padding", c.padding)
      .ints("dilations", {c.dilation, c.dilation});
  t.str("data_format", c.format);
}

TEST_P(ConvGrad, DataAndFilterMatchFiniteDifferences) {
  const ConvCase c = GetParam();
  const bool nchw = std::string(c.format) == "NCHW";
  const int64_t n = 2, ci = 2, co = 3;
  const auto pad = *dlrt::ops::parse_padding(c.padding);
  const int64_t oh = dlrt::ops::window_output_size(pad, c.h, c.kh, c.stride, c.dilation);
  const int64_t ow = dlrt::ops::window_output_size(pad, c.w, c.kw, c.stride, c.dilation);
  std::vector<int64_t> xd =
      nchw ? std::vector<int64_t>{n, ci, c.h, c.w} : std::vector<int64_t>{n, c.h, c.w, ci};
  std::vector<int64_t> yd =
      nchw ? std::vector<int64_t>{n, co, oh, ow} : std::vector<int64_t>{n, oh, ow, co};
  std::vector<int64_t> wd = {c.kh, c.kw, ci, co};
  std::mt19937 rng(42);
  Inputs in = {random_vec(numel(xd), rng), random_vec(numel(wd), rng)};
  const D r = random_vec(numel(yd), rng);

  Forward fwd = [&](const Inputs& v) {
    TestOp t("conv2d");
    t.in(DLRT_F64, xd).in(DLRT_F64, wd).out(DLRT_F64, yd);
    conv_attrs(t, c);
    return t.run_f64(v)[0];
  };
  TestOp bd("conv2d_backward_data");
  bd.in(DLRT_F64, yd).in(DLRT_F64, wd).out(DLRT_F64, xd).ints("input_shape", xd);
  conv_attrs(bd, c);
  expect_grad(bd.run_f64({r, in[1]})[0], numeric_grad(fwd, in, 0, r), "dx");

  TestOp bf("conv2d_backward_filter");
  bf.in(DLRT_F64, xd).in(DLRT_F64, yd).out(DLRT_F64, wd).ints("filter_shape", wd);
  conv_attrs(bf, c);
  expect_grad(bf.run_f64({in[0], r})[0], numeric_grad(fwd, in, 1, r), "dw");
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvGrad,
                         ::testing::Values(ConvCase{"VALID", 1, "NHWC", 1, 5, 6, 3, 2},
                                           ConvCase{"SAME", 1, "NHWC", 1, 5, 6, 3, 2},
                                           ConvCase{"VALID", 2, "NHWC", 1, 7, 6, 3, 3},
                                           ConvCase{"SAME", 2, "NHWC", 1, 7, 6, 3, 3},
                                           ConvCase{"SAME", 2, "NCHW", 1, 5, 4, 2, 3},
                                           ConvCase{"VALID", 1, "NCHW", 1, 4, 5, 2, 2},
                                           ConvCase{"SAME", 1, "NHWC", 2, 6, 5, 3, 2}));

// ---- pooling -----------------------------------------------------------------------------

struct PoolCase {
  const char* padding;
  int64_t k, stride;
  const char* format;
};

std::ostream& operator<<(std::ostream& os, const PoolCase& c) {
  return os << c.padding << " k " << c.k << " stride " << c.stride << " " << c.format;
}

class PoolGrad : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolGrad, MaxAndAvgMatchFiniteDifferences) {
  const PoolCase c = GetParam();
  const bool nchw = std::string(c.format) == "NCHW";
  const int64_t n = 2, h = 5, w = 6, ch = 2;
  const auto pad = *dlrt::ops::parse_padding(c.padding);
  const int64_t oh = dlrt::ops::window_output_size(pad, h, c.k, c.stride);
  const int64_t ow = dlrt::ops::window_output_size(pad, w, c.k, c.stride);
  std::vector<int64_t> xd =
      nchw ? std::vector<int64_t>{n, ch, h, w} : std::vector<int64_t>{n, h, w, ch};
  std::vector<int64_t> yd =
      nchw ? std::vector<int64_t>{n, ch, oh, ow} : std::vector<int64_t>{n, oh, ow, ch};
  auto attrs = [&](TestOp& t) {
    t.ints("ksize", {c.k, c.k}).ints("strides", {c.stride, c.stride}).str("padding", c.padding);
    t.str("data_format", c.format);
  };
  std::mt19937 rng(7);
  // Distinct values, at least 1e-3 apart: a step of h = 1e-6 never changes which cell is the max.
  D x(numel(xd));
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i) * 1e-2;
  std::shuffle(x.begin(), x.end(), rng);
  const D r = random_vec(numel(yd), rng);

  for (const char* name : {"max_pool2d", "avg_pool2d"}) {
    Forward fwd = [&](const Inputs& v) {
      TestOp t(name);
      t.in(DLRT_F64, xd).out(DLRT_F64, yd);
      attrs(t);
      return t.run_f64(v)[0];
    };
    D analytic;
    if (std::string(name) == "max_pool2d") {
      TestOp b("max_pool2d_backward");
      b.in(DLRT_F64, xd).in(DLRT_F64, yd).out(DLRT_F64, xd);
      attrs(b);
      analytic = b.run_f64({x, r})[0];
    } else {
      TestOp b("avg_pool2d_backward");
      b.in(DLRT_F64, yd).out(DLRT_F64, xd).ints("input_shape", xd);
      attrs(b);
      analytic = b.run_f64({r})[0];
    }
    expect_grad(analytic, numeric_grad(fwd, {x}, 0, r), name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PoolGrad,
    ::testing::Values(PoolCase{"VALID", 2, 2, "NHWC"}, PoolCase{"SAME", 2, 2, "NHWC"},
                      PoolCase{"SAME", 3, 2, "NHWC"}, PoolCase{"VALID", 3, 1, "NHWC"},
                      PoolCase{"SAME", 3, 1, "NCHW"}, PoolCase{"SAME", 2, 2, "NCHW"}));

TEST(PoolGrad, MaxGradientGoesToFirstMaxOfTies) {
  TestOp b("max_pool2d_backward");
  b.in(DLRT_F64, {1, 2, 2, 1}).in(DLRT_F64, {1, 1, 1, 1}).out(DLRT_F64, {1, 2, 2, 1});
  b.ints("ksize", {2, 2})
      .ints("strides", {2, 2})
      .str("padding", "VALID")
      .str("data_format", "NHWC");
  EXPECT_EQ(b.run_f64({{1, 3, 3, 2}, {5}})[0], (D{0, 5, 0, 0}));
}

// ---- bias_add, activations ---------------------------------------------------------------

TEST(BiasAddGrad, MatchesFiniteDifferences) {
  for (const char* format : {"NHWC", "NCHW"}) {
    const std::vector<int64_t> xd = {2, 3, 2, 4};
    const int64_t c = std::string(format) == "NCHW" ? 3 : 4;
    std::mt19937 rng(3);
    Inputs in = {random_vec(numel(xd), rng), random_vec(size_t(c), rng)};
    const D r = random_vec(numel(xd), rng);
    Forward fwd = [&](const Inputs& v) {
      TestOp t("bias_add");
      t.in(DLRT_F64, xd).in(DLRT_F64, {c}).out(DLRT_F64, xd).str("data_format", format);
      return t.run_f64(v)[0];
    };
    TestOp g("bias_add_grad");
    g.in(DLRT_F64, xd).out(DLRT_F64, {c}).str("data_format", format);
    expect_grad(g.run_f64({r})[0], numeric_grad(fwd, in, 1, r), format);
  }
}

TEST(ActivationGrad, MatchFiniteDifferences) {
  std::mt19937 rng(11);
  const std::vector<int64_t> dims = {3, 5};
  D x = random_vec(15, rng, -2, 2);
  for (double& v : x)
    if (std::fabs(v) < 0.05) v = 0.5;  // keep relu away from its kink
  const D r = random_vec(15, rng);
  for (const char* act : {"relu", "sigmoid", "tanh"}) {
    Forward fwd = [&](const Inputs& v) {
      TestOp t(act);
      t.in(DLRT_F64, dims).out(DLRT_F64, dims);
      return t.run_f64(v)[0];
    };
    const std::string name = std::string(act) + "_grad";
    TestOp g(name);
    g.in(DLRT_F64, dims).in(DLRT_F64, dims).out(DLRT_F64, dims);
    // relu_grad takes x; sigmoid_grad and tanh_grad take the forward output y.
    const D second = name == "relu_grad" ? x : fwd({x});
    expect_grad(g.run_f64({r, second})[0], numeric_grad(fwd, {x}, 0, r), name.c_str());
  }
}

// ---- reduce_max --------------------------------------------------------------------------

TEST(ReduceMaxGrad, MatchesFiniteDifferences) {
  struct Case {
    std::vector<int64_t> axes;
    bool keepdims;
    std::vector<int64_t> ydims;
  };
  const std::vector<int64_t> xd = {3, 4, 2};
  for (const Case& c :
       {Case{{1}, false, {3, 2}}, Case{{}, true, {1, 1, 1}}, Case{{0, -1}, true, {1, 4, 1}}}) {
    std::mt19937 rng(5);
    const D x = random_vec(numel(xd), rng);
    const D r = random_vec(numel(c.ydims), rng);
    Forward fwd = [&](const Inputs& v) {
      TestOp t("reduce_max");
      t.in(DLRT_F64, xd).out(DLRT_F64, c.ydims).ints("axes", c.axes).b("keepdims", c.keepdims);
      return t.run_f64(v)[0];
    };
    TestOp g("reduce_max_grad");
    g.in(DLRT_F64, xd).in(DLRT_F64, c.ydims).in(DLRT_F64, c.ydims).out(DLRT_F64, xd);
    g.ints("axes", c.axes).b("keepdims", c.keepdims);
    expect_grad(g.run_f64({x, fwd({x}), r})[0], numeric_grad(fwd, {x}, 0, r), "reduce_max_grad");
  }
}

// ---- sparse softmax cross-entropy --------------------------------------------------------

TEST(SparseSoftmaxCrossEntropyGrad, BackpropMatchesFiniteDifferencesOfLoss) {
  const int64_t n = 4, k = 5;
  std::mt19937 rng(9);
  const D logits = random_vec(size_t(n * k), rng, -3, 3);
  const std::vector<int32_t> labels = {0, 4, 2, 2};
  const D r = random_vec(size_t(n), rng);
  auto run = [&](const D& l, D* loss, D* backprop) {
    TestOp t("sparse_softmax_cross_entropy");
    t.in(DLRT_F64, {n, k}).in(DLRT_I32, {n}).out(DLRT_F64, {n}).out(DLRT_F64, {n, k});
    loss->assign(size_t(n), 0.0);
    backprop->assign(size_t(n * k), 0.0);
    t.run_raw({l.data(), labels.data()}, {loss->data(), backprop->data()});
  };
  Forward fwd = [&](const Inputs& v) {
    D loss, backprop;
    run(v[0], &loss, &backprop);
    return loss;
  };
  D loss, backprop;
  run(logits, &loss, &backprop);
  // dL/dlogits[i,j] = r[i] * backprop[i,j]
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) backprop[size_t(i * k + j)] *= r[size_t(i)];
  expect_grad(backprop, numeric_grad(fwd, {logits}, 0, r), "backprop");
}

// ---- matmul: the transpose flags autodiff uses for its gradients -------------------------

TEST(MatmulGrad, TransposeFlagsGiveTheGradients) {
  // c = a.b, a: (3,4), b: (4,2): da = dc . b^T = matmul(dc, b, transpose_b); db = a^T . dc.
  std::mt19937 rng(13);
  Inputs in = {random_vec(12, rng), random_vec(8, rng)};
  const D r = random_vec(6, rng);
  Forward fwd = [&](const Inputs& v) {
    TestOp t("matmul");
    t.in(DLRT_F64, {3, 4})
        .in(DLRT_F64, {4, 2})
        .out(DLRT_F64, {3, 2})
        .b("transpose_a", false)
        .b("transpose_b", false);
    return t.run_f64(v)[0];
  };
  TestOp da("matmul");
  da.in(DLRT_F64, {3, 2})
      .in(DLRT_F64, {4, 2})
      .out(DLRT_F64, {3, 4})
      .b("transpose_a", false)
      .b("transpose_b", true);
  expect_grad(da.run_f64({r, in[1]})[0], numeric_grad(fwd, in, 0, r), "da");
  TestOp db("matmul");
  db.in(DLRT_F64, {3, 4})
      .in(DLRT_F64, {3, 2})
      .out(DLRT_F64, {4, 2})
      .b("transpose_a", true)
      .b("transpose_b", false);
  expect_grad(db.run_f64({in[0], r})[0], numeric_grad(fwd, in, 1, r), "db");
}

}  // namespace
