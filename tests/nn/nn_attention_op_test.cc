// nn_attention_op_test.cc: the fused attention op against the composed form a user writes,
//   o = batch_matmul(softmax(causal_mask(batch_matmul(q, k, transpose_b) * scale)), v),
// forward and backward (Graph::gradients of loss = sum(o * r) through either form), on the
// reference device and on the cpu plugin. Shapes: rank 3 and 4, causal and not, Tq < Tk
// causal, Tq = 1 against a cache, D != Dv, the scale attribute, and lengths past the cpu
// kernel's 32-row tiles. lse is checked against the log-sum-exp of the composed scores.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

dlrt::Context context_for(const std::string& devices) {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .plugin_options("")
                           .visible_devices(devices)
                           .log_level(DLRT_LOG_ERROR));
}

struct Case {
  std::vector<int64_t> batch;
  int64_t tq, tk, d, dv;
  int causal;
  double scale;  // 0: 1/sqrt(D)
};

std::vector<int64_t> cat(std::vector<int64_t> d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail);
  return d;
}

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

size_t count(const std::vector<int64_t>& d) {
  size_t n = 1;
  for (int64_t x : d) n *= size_t(x);
  return n;
}

// o, dq, dk, dv (and lse for the fused form; the composed form's row log-sum-exp of its
// masked scores, from reduce ops) of one form on one device.
std::vector<std::vector<float>> run_form(dlrt::Context& ctx, const Case& c, bool fused) {
  dlrt::Graph g(ctx);
  const auto qd = cat(c.batch, {c.tq, c.d}), kd = cat(c.batch, {c.tk, c.d}),
             vd = cat(c.batch, {c.tk, c.dv}), od = cat(c.batch, {c.tq, c.dv});
  dlrt::Value q = g.constant<float>("q", qd, random_values(count(qd), 1));
  dlrt::Value k = g.constant<float>("k", kd, random_values(count(kd), 2));
  dlrt::Value v = g.constant<float>("v", vd, random_values(count(vd), 3));
  dlrt::Value r = g.constant<float>("r", od, random_values(count(od), 4));
  dlrt::Value o, lse;
  if (fused) {
    dlrt::OpAttrs attrs = {{"causal", c.causal}};
    if (c.scale != 0) attrs.push_back({"scale", c.scale});
    std::vector<dlrt::Value> out = g.op("attention", {q, k, v}, attrs);
    o = out[0];
    lse = out[1];
  } else {
    const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(double(c.d));
    dlrt::Value s = g.op1("batch_matmul", {q, k}, {{"transpose_b", true}});
    s = g.op1("mul", {s, g.constant<float>("scale", {}, {float(scale)})});
    if (c.causal) s = g.op1("causal_mask", {s});
    o = g.op1("batch_matmul", {g.op1("softmax", {s}), v});
    // lse = max + log(sum(exp(s - max))) over the last axis.
    const int64_t last = int64_t(qd.size()) - 1;
    dlrt::Value mx = g.op1("reduce_max", {s}, {{"axes", std::vector<int64_t>{last}}, {"keepdims", true}});
    dlrt::Value sum = g.op1("reduce_sum", {g.op1("exp", {g.op1("sub", {s, mx})})},
                            {{"axes", std::vector<int64_t>{last}}, {"keepdims", false}});
    lse = g.op1("add", {g.op1("log", {sum}),
                        g.op1("reshape", {mx}, {{"shape", cat(c.batch, {c.tq})}})});
  }
  dlrt::Value loss = g.op1("reduce_sum", {g.op1("mul", {o, r})});
  std::vector<dlrt::Value> fetch = {o, lse};
  for (dlrt::Value d : g.gradients(loss, {q, k, v})) fetch.push_back(d);
  dlrt::Executable exe = g.compile({}, fetch);
  std::vector<dlrt::Tensor> out(fetch.size());
  exe.run({}, out);
  std::vector<std::vector<float>> values;
  for (dlrt::Tensor& t : out) values.push_back(t.read<float>());
  return values;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1, worst = 0;
  for (float w : want) scale = std::max(scale, double(std::fabs(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << " " << i;
    worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])));
  }
  EXPECT_LE(worst / scale, tol) << what;
}

const Case kCases[] = {
    {{2, 3}, 5, 5, 4, 4, 0, 0},   {{2, 3}, 5, 5, 4, 4, 1, 0},   {{3}, 4, 7, 8, 8, 1, 0},
    {{2, 2}, 1, 9, 8, 8, 1, 0},   {{2}, 6, 6, 8, 3, 0, 0.5},    {{2}, 9, 4, 4, 4, 0, 0},
    {{1, 2}, 33, 40, 16, 12, 1, 0}, {{2, 2}, 70, 70, 32, 32, 1, 0}, {{1}, 65, 65, 8, 8, 0, 0.3},
};

TEST(AttentionOp, FusedEqualsComposedForwardAndBackward) {
  const char* names[] = {"o", "lse", "dq", "dk", "dv"};
  for (const char* dev : {"REF", "CPU"}) {
    dlrt::Context ctx = context_for(dev);
    for (const Case& c : kCases) {
      SCOPED_TRACE(std::string(dev) + " tq " + std::to_string(c.tq) + " tk " +
                   std::to_string(c.tk) + " d " + std::to_string(c.d) + " dv " +
                   std::to_string(c.dv) + " causal " + std::to_string(c.causal));
      const auto fused = run_form(ctx, c, true), composed = run_form(ctx, c, false);
      ASSERT_EQ(fused.size(), 5u);
      for (size_t i = 0; i < 5; ++i) expect_close(fused[i], composed[i], 2e-5, names[i]);
    }
  }
}

// The cpu's fused kernels against the reference device's (the oracle), the same numbers.
TEST(AttentionOp, CpuEqualsReference) {
  dlrt::Context cpu_ctx = context_for("CPU"), ref_ctx = context_for("REF");
  for (const Case& c : kCases) {
    SCOPED_TRACE("tq " + std::to_string(c.tq) + " tk " + std::to_string(c.tk));
    const auto cpu = run_form(cpu_ctx, c, true), ref = run_form(ref_ctx, c, true);
    for (size_t i = 0; i < 5; ++i) expect_close(cpu[i], ref[i], 2e-5, "cpu vs reference");
  }
}

// A causal row sees only its keys: changing a key/value the row must not see leaves its
// output alone (the last query row sees them all).
TEST(AttentionOp, CausalRowsIgnoreLaterKeys) {
  const Case c{{1}, 4, 6, 4, 4, 1, 0};
  dlrt::Context ctx = context_for("CPU");
  const auto a = run_form(ctx, c, true);
  // Key 5 (the last) is visible only to the last query row (offset 2: row i sees j <= i + 2).
  dlrt::Graph g(ctx);
  auto kv = random_values(24, 2), vv = random_values(24, 3);
  for (int e = 20; e < 24; ++e) kv[size_t(e)] += 5.f, vv[size_t(e)] -= 3.f;
  dlrt::Value q = g.constant<float>("q", {1, 4, 4}, random_values(16, 1));
  dlrt::Value k = g.constant<float>("k", {1, 6, 4}, kv);
  dlrt::Value v = g.constant<float>("v", {1, 6, 4}, vv);
  dlrt::Value o = g.op1("attention", {q, k, v}, {{"causal", 1}});
  dlrt::Executable exe = g.compile({}, {o});
  std::vector<dlrt::Tensor> out(1);
  exe.run({}, out);
  const std::vector<float> b = out[0].read<float>();
  for (int e = 0; e < 12; ++e) EXPECT_EQ(a[0][size_t(e)], b[size_t(e)]) << e;  // rows 0..2
  double moved = 0;
  for (int e = 12; e < 16; ++e) moved += std::fabs(a[0][size_t(e)] - b[size_t(e)]);
  EXPECT_GT(moved, 1e-3);
}

}  // namespace
