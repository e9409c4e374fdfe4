// passes_test.cc: the graph-pass stage (passes.hpp) through the public API, on the cpu device:
// each pass rewrites what it should and leaves alone what it must (values read twice, fetched
// or assigned; training gradients), results equal the graph as built, the caller's graph is
// never changed, and the option and the setting turn passes off.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph/graph_handle.hpp"
#include "passes/passes.hpp"
#include "status.hpp"
#include "test_env.hpp"

namespace {

dlrt::Context cpu_context() {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .visible_devices("CPU")
                           .plugin_options("")
                           .log_level(DLRT_LOG_ERROR));
}

std::vector<float> ramp(size_t n, float scale, float offset = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 23) - offset;
  return v;
}

// Runs `ex` on `x` and returns its only fetch.
std::vector<float> run1(dlrt::Executable& ex, const dlrt::Tensor& x) {
  std::vector<dlrt::Tensor> out(1);
  ex.run({&x}, out);
  return out[0].read<float>();
}

// The ops of an executable's placed nodes, in placement order.
std::vector<std::string> ops_of(const dlrt::Executable& ex) {
  std::vector<std::string> ops;
  for (size_t i = 0; i < ex.node_count(); ++i) ops.push_back(ex.node_placement(i).op);
  return ops;
}

bool has_op(const dlrt::Executable& ex, const std::string& op) {
  for (const std::string& o : ops_of(ex))
    if (o == op) return true;
  return false;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "element " << i;
}

const dlrt::CompileOptions kNone = dlrt::CompileOptions().with_graph_passes("none");

TEST(GraphPasses, ConvBiasReluBecomeOneConv2dBiasAct) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 6, 6, 3});
  dlrt::Value w = g.constant<float>("w", {3, 3, 3, 4}, ramp(108, 0.05f, 0.5f));
  dlrt::Value b = g.constant<float>("b", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  dlrt::Value y = g.op1(
      "relu", {g.op1("bias_add", {g.op1("conv2d", {x, w}, {}, "conv"), b}, {}, "bias")}, {}, "act");
  dlrt::Value out = g.op1("max_pool2d", {y});  // a consumer after the fused anchor
  const dlrt::core::Graph& inside = *g.get();  // the caller's graph, read through the core
  const size_t nodes_before = inside.nodes().size();

  dlrt::Executable fused = g.compile({x}, {out});
  dlrt::Executable plain = g.compile({x}, {out}, kNone);
  // The caller's graph is untouched: no node added, the relu still a relu of the bias_add.
  EXPECT_EQ(inside.nodes().size(), nodes_before);
  const dlrt::core::Node& act = inside.node(inside.find("act")->node);
  EXPECT_EQ(act.op, "relu");
  EXPECT_EQ(inside.node(act.inputs.at(0).node).name, "bias");

  EXPECT_TRUE(has_op(fused, "conv2d_bias_act"));
  EXPECT_FALSE(has_op(fused, "conv2d"));
  EXPECT_FALSE(has_op(fused, "bias_add"));
  EXPECT_FALSE(has_op(fused, "relu"));
  EXPECT_TRUE(has_op(plain, "relu"));
  const std::string log = fused.pass_log();
  EXPECT_NE(log.find("fuse_bias_activation: conv (conv2d) + bias (bias_add) -> bias "
                     "(conv2d_bias_act)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("-> act (conv2d_bias_act, activation relu)"), std::string::npos) << log;
  EXPECT_NE(log.find("remove_dead_nodes: 2 nodes no longer read: conv (conv2d), bias"),
            std::string::npos)
      << log;
  EXPECT_EQ(plain.pass_log(), "");

  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {2, 6, 6, 3});
  xt.write(ramp(216, 0.1f, 1.f));
  expect_near(run1(fused, xt), run1(plain, xt), 1e-5f);
}

TEST(GraphPasses, MatmulBiasSigmoidBecomeOneMatmulBiasAct) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {3, 5});
  dlrt::Value w = g.variable("w", DLRT_F32, {5, 2}, "fill", {{"value", 0.25}});
  dlrt::Value b = g.constant<float>("b", {2}, {1.f, -1.f});
  dlrt::Value y = g.op1("sigmoid", {g.op1("bias_add", {g.op1("matmul", {x, w}), b})});
  dlrt::Executable fused = g.compile({x}, {y});
  dlrt::Executable plain = g.compile({x}, {y}, kNone);
  EXPECT_EQ(ops_of(fused),
            (std::vector<std::string>{"placeholder", "variable", "constant", "matmul_bias_act"}));
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {3, 5});
  xt.write(ramp(15, 0.3f, 2.f));
  expect_near(run1(fused, xt), run1(plain, xt), 1e-6f);
}

// A value read by two nodes, a fetched intermediate, and an intermediate read by a gradient
// stay as built.
TEST(GraphPasses, ValuesReadOutsideThePatternAreNotFused) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {4, 3});
  dlrt::Value w = g.constant<float>("w", {3, 2}, ramp(6, 0.5f, 1.f));
  dlrt::Value b = g.constant<float>("b", {2}, {0.5f, -0.5f});
  dlrt::Value mm = g.op1("matmul", {x, w});
  dlrt::Value biased = g.op1("bias_add", {mm, b});
  dlrt::Value other = g.op1("tanh", {mm});  // mm read twice: no fusion with the bias
  dlrt::Executable both = g.compile({x}, {biased, other});
  EXPECT_TRUE(has_op(both, "matmul"));
  EXPECT_TRUE(has_op(both, "bias_add"));
  EXPECT_EQ(both.pass_log(), "");

  dlrt::Graph h(ctx);
  dlrt::Value hx = h.placeholder("x", DLRT_F32, {4, 3});
  dlrt::Value hmm = h.op1("matmul", {hx, h.constant<float>("w", {3, 2}, ramp(6, 0.5f))});
  dlrt::Value hb = h.op1("bias_add", {hmm, h.constant<float>("b", {2}, {1.f, 2.f})});
  dlrt::Executable fetched = h.compile({hx}, {hb, hmm});  // the matmul's value is fetched
  EXPECT_TRUE(has_op(fetched, "matmul"));
  EXPECT_TRUE(has_op(fetched, "bias_add"));
}

// conv -> inference batch_norm (variables) -> relu: the batch norm folds into the conv and the
// relu fuses after it; the fold reads the variables on every run, so a changed moving mean
// shows in the next run.
TEST(GraphPasses, BatchNormFoldsIntoConvAndFollowsItsVariables) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 5, 5, 3});
  dlrt::Value w = g.variable("w", DLRT_F32, {3, 3, 3, 4}, "random_uniform",
                             {{"minval", -0.5}, {"maxval", 0.5}, {"seed", int64_t{3}}});
  dlrt::Value gamma = g.variable("gamma", DLRT_F32, {4}, "fill", {{"value", 1.5}});
  dlrt::Value beta = g.variable("beta", DLRT_F32, {4}, "fill", {{"value", 0.25}});
  dlrt::Value mean = g.variable("mean", DLRT_F32, {4}, "fill", {{"value", 0.1}}, false);
  dlrt::Value var = g.variable("var", DLRT_F32, {4}, "fill", {{"value", 2.0}}, false);
  dlrt::Value conv = g.op1("conv2d", {x, w}, {{"padding", "SAME"}}, "conv");
  dlrt::Value bn = g.op1("batch_norm", {conv, gamma, beta, mean, var}, {{"epsilon", 1e-3}}, "bn");
  dlrt::Value y = g.op1("relu", {bn}, {}, "act");
  dlrt::Executable fused = g.compile({x}, {y});
  dlrt::Executable plain = g.compile({x}, {y}, kNone);
  EXPECT_FALSE(has_op(fused, "batch_norm"));
  EXPECT_FALSE(has_op(fused, "relu"));
  EXPECT_TRUE(has_op(fused, "conv2d_bias_act"));
  const std::string log = fused.pass_log();
  EXPECT_NE(log.find("fold_batch_norm: conv (conv2d) + bn (batch_norm) -> bn (conv2d_bias_act, "
                     "activation none)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("fuse_bias_activation: bn (conv2d_bias_act) + act (relu)"), std::string::npos)
      << log;

  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {2, 5, 5, 3});
  xt.write(ramp(150, 0.2f, 2.f));
  expect_near(run1(fused, xt), run1(plain, xt), 1e-5f);
  g.write_variable<float>(mean, {0.5f, -0.5f, 1.f, 0.f});  // as a training epoch would
  expect_near(run1(fused, xt), run1(plain, xt), 1e-5f);
}

// The importer's form: conv2d -> bias_add -> batch_norm -> relu, all on constants. The bias_add
// folds with the batch norm, the relu fuses after, and the folded weights become constants.
TEST(GraphPasses, BatchNormAfterABiasAddFoldsAndItsWeightsBecomeConstants) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {1, 4, 4, 2});
  dlrt::Value w = g.constant<float>("w", {1, 1, 2, 3}, ramp(6, 0.25f, 1.f));
  dlrt::Value c =
      g.op1("bias_add", {g.op1("conv2d", {x, w}), g.constant<float>("b", {3}, {1, 2, 3})});
  dlrt::Value bn = g.op1("batch_norm",
                         {c, g.constant<float>("gamma", {3}, {1.f, 0.5f, 2.f}),
                          g.constant<float>("beta", {3}, {0.f, 0.1f, -0.1f}),
                          g.constant<float>("mean", {3}, {0.2f, 0.f, -1.f}),
                          g.constant<float>("var", {3}, {1.f, 4.f, 0.25f})},
                         {{"epsilon", 1e-5}}, "bn");
  dlrt::Value y = g.op1("relu", {bn}, {}, "act");
  dlrt::Executable fused = g.compile({x}, {y});
  dlrt::Executable plain = g.compile({x}, {y}, kNone);
  EXPECT_EQ(ops_of(fused),
            (std::vector<std::string>{"placeholder", "constant", "constant", "conv2d_bias_act"}))
      << fused.pass_log();
  EXPECT_NE(fused.pass_log().find("fold_constants:"), std::string::npos) << fused.pass_log();
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {1, 4, 4, 2});
  xt.write(ramp(32, 0.3f, 3.f));
  expect_near(run1(fused, xt), run1(plain, xt), 1e-5f);
}

// Scale and shift after a batch norm (an exporter's Mul and Add by per-channel constants, a
// Sub and a Div by one number) fold into the batch norm's scale and bias, and the relu after
// them into its activation: one batch_norm. A mul whose other operand is read elsewhere too
// folds all the same (only the batch norm's output must be the pattern's own); one after a
// batch norm whose output is also fetched does not.
TEST(GraphPasses, AffineOpsAfterABatchNormFoldIntoIt) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 3, 3, 4});
  auto c4 = [&](const char* name, std::vector<float> v) {
    return g.constant<float>(name, {4}, std::move(v));
  };
  dlrt::Value bn = g.op1("batch_norm",
                         {x, c4("gamma", {1.f, 0.5f, 2.f, -1.f}), c4("beta", {0.f, 0.1f, -0.1f, 1.f}),
                          c4("mean", {0.2f, 0.f, -1.f, 0.5f}), c4("var", {1.f, 4.f, 0.25f, 2.f})},
                         {{"epsilon", 1e-5}}, "bn");
  dlrt::Value m = g.op1("mul", {c4("s", {2.f, -1.f, 0.5f, 3.f}), bn}, {}, "scale");
  dlrt::Value a = g.op1("add", {m, c4("t", {0.5f, 0.25f, -2.f, 0.f})}, {}, "shift");
  dlrt::Value sub = g.op1("sub", {a, g.constant<float>("one", {}, {1.f})}, {}, "minus");
  dlrt::Value d = g.op1("div", {sub, g.constant<float>("two", {1}, {2.f})}, {}, "half");
  dlrt::Value y = g.op1("relu", {d}, {}, "act");
  dlrt::Executable fused = g.compile({x}, {y});
  dlrt::Executable plain = g.compile({x}, {y}, kNone);
  EXPECT_EQ(ops_of(fused), (std::vector<std::string>{"placeholder", "constant", "constant",
                                                     "constant", "constant", "batch_norm"}))
      << fused.pass_log();
  EXPECT_NE(fused.pass_log().find("the mul folded into its scale and bias"), std::string::npos)
      << fused.pass_log();
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {2, 3, 3, 4});
  xt.write(ramp(72, 0.3f, 3.f));
  expect_near(run1(fused, xt), run1(plain, xt), 1e-5f);

  // The batch norm's output fetched as well: the mul after it stays.
  dlrt::Executable both = g.compile({x}, {y, bn});
  EXPECT_TRUE(has_op(both, "mul")) << both.pass_log();
}

// Ops on constants only run once, at compile: the executable holds their result.
TEST(GraphPasses, ConstantSubgraphsFold) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 3});
  dlrt::Value c = g.constant<float>("c", {2, 3}, {1, 2, 3, 4, 5, 6});
  dlrt::Value scaled = g.op1("mul", {c, g.constant<float>("two", {}, {2.f})}, {}, "scaled");
  dlrt::Value shifted = g.op1("neg", {scaled}, {}, "negated");
  dlrt::Value y = g.op1("add", {x, shifted});
  dlrt::Value noise = g.op1("random_uniform", {}, {{"shape", std::vector<int64_t>{2, 3}}});
  dlrt::Value z = g.op1("add", {y, g.op1("mul", {noise, g.constant<float>("zero", {}, {0.f})})});
  dlrt::Executable folded = g.compile({x}, {z});
  dlrt::Executable plain = g.compile({x}, {z}, kNone);
  const std::string log = folded.pass_log();
  EXPECT_NE(log.find("fold_constants: 2 ops computed at compile, now constants: scaled (mul), "
                     "negated (neg)"),
            std::string::npos)
      << log;
  EXPECT_TRUE(has_op(folded, "random_uniform"));  // random: never folded
  EXPECT_FALSE(has_op(folded, "neg"));
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {2, 3});
  xt.write(std::vector<float>{10, 10, 10, 10, 10, 10});
  EXPECT_EQ(run1(folded, xt), (std::vector<float>{8, 6, 4, 2, 0, -2}));
  EXPECT_EQ(run1(plain, xt), run1(folded, xt));
}

// A training step: conv2d -> bias_add fuses (the conv's value is read only by the bias_add;
// its gradient needs dy alone), and the step trains as the graph built would.
TEST(GraphPasses, TrainingStepFusesWhatGradientsDoNotRead) {
  dlrt::Context ctx = cpu_context();
  auto build = [&](dlrt::Graph& g, dlrt::Value* loss) {
    dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 4, 4, 2});
    dlrt::Value w = g.variable("w", DLRT_F32, {3, 3, 2, 3}, "random_uniform",
                               {{"minval", -0.3}, {"maxval", 0.3}, {"seed", int64_t{5}}});
    dlrt::Value b = g.variable("b", DLRT_F32, {3}, "fill", {{"value", 0.0}});
    dlrt::Value y = g.op1("relu", {g.op1("bias_add", {g.op1("conv2d", {x, w}), b})});
    *loss = g.op1("reduce_mean", {g.op1("mul", {y, y})});
    std::vector<dlrt::Value> grads = g.gradients(*loss, {w, b});
    dlrt::Value lr = g.constant<float>("lr", {}, {0.1f});
    g.assign(w, g.op1("sub", {w, g.op1("mul", {grads[0], lr})}));
    g.assign(b, g.op1("sub", {b, g.op1("mul", {grads[1], lr})}));
    return x;
  };
  dlrt::Graph g1(ctx), g2(ctx);
  dlrt::Value l1, l2;
  dlrt::Value x1 = build(g1, &l1), x2 = build(g2, &l2);
  (void)x1;
  (void)x2;
  dlrt::Executable fused = g1.compile({x1}, {l1}, dlrt::CompileOptions().with_run_assigns(true));
  dlrt::Executable plain = g2.compile(
      {x2}, {l2}, dlrt::CompileOptions().with_run_assigns(true).with_graph_passes("none"));
  EXPECT_NE(fused.pass_log().find("(conv2d) + bias_add (bias_add) -> bias_add (conv2d_bias_act)"),
            std::string::npos)
      << fused.pass_log();
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {2, 4, 4, 2});
  xt.write(ramp(64, 0.1f, 1.f));
  for (int step = 0; step < 5; ++step) {
    const float a = run1(fused, xt)[0], b = run1(plain, xt)[0];
    EXPECT_NEAR(a, b, 1e-5f * std::max(1.f, std::fabs(b))) << "step " << step;
  }
}

// A training step's batch norms: conv -> batch_norm_train -> relu, then a residual tail
// relu(add(batch_norm_train(conv(r1)), r1)), differentiated with autodiff. The passes fuse the
// forward ops with the gradient ops autodiff made for them (fuse_bias_activation,
// fuse_residual_tail), and the step trains as the graph built does: losses, weights and the
// running statistics the assigns write.
TEST(GraphPasses, TrainingBatchNormsFuseWithTheirGradients) {
  dlrt::Context ctx = cpu_context();
  struct Step {
    dlrt::Value x, loss;
    std::vector<dlrt::Value> state;
  };
  auto build = [&](dlrt::Graph& g) {
    Step s;
    s.x = g.placeholder("x", DLRT_F32, {4, 5, 5, 3});
    auto weights = [&](const std::string& name, int64_t seed) {
      return g.variable(name, DLRT_F32, {3, 3, 3, 3}, "random_uniform",
                        {{"minval", -0.4}, {"maxval", 0.4}, {"seed", seed}});
    };
    auto channel = [&](const std::string& name, double v, bool trains) {
      return g.variable(name, DLRT_F32, {3}, "fill", {{"value", v}}, trains);
    };
    dlrt::Value w1 = weights("w1", 11), w2 = weights("w2", 12);
    dlrt::Value g1 = channel("g1", 1.5, true), b1 = channel("b1", 0.1, true);
    dlrt::Value g2 = channel("g2", 0.8, true), b2 = channel("b2", -0.1, true);
    dlrt::Value m1 = channel("m1", 0.0, false), v1 = channel("v1", 1.0, false);
    dlrt::Value m2 = channel("m2", 0.0, false), v2 = channel("v2", 1.0, false);
    const dlrt::OpAttrs bn_attrs = {{"epsilon", 1e-3}, {"momentum", 0.9}};
    const dlrt::OpAttrs same = {{"padding", "SAME"}};
    std::vector<dlrt::Value> bn1 = g.op(
        "batch_norm_train", {g.op1("conv2d", {s.x, w1}, same), g1, b1, m1, v1}, bn_attrs, "bn1");
    dlrt::Value r1 = g.op1("relu", {bn1[0]}, {}, "act1");
    std::vector<dlrt::Value> bn2 = g.op(
        "batch_norm_train", {g.op1("conv2d", {r1, w2}, same), g2, b2, m2, v2}, bn_attrs, "bn2");
    dlrt::Value r2 = g.op1("relu", {g.op1("add", {bn2[0], r1}, {}, "add2")}, {}, "act2");
    s.loss = g.op1("reduce_mean", {g.op1("mul", {r2, r2})});
    const std::vector<dlrt::Value> trained = {w1, g1, b1, w2, g2, b2};
    std::vector<dlrt::Value> grads = g.gradients(s.loss, trained);
    dlrt::Value lr = g.constant<float>("lr", {}, {0.2f});
    for (size_t i = 0; i < trained.size(); ++i)
      g.assign(trained[i], g.op1("sub", {trained[i], g.op1("mul", {grads[i], lr})}));
    g.assign(m1, bn1[1]);
    g.assign(v1, bn1[2]);
    g.assign(m2, bn2[1]);
    g.assign(v2, bn2[2]);
    s.state = {w1, g1, b1, w2, g2, b2, m1, v1, m2, v2};
    return s;
  };
  dlrt::Graph gf(ctx), gp(ctx);
  Step f = build(gf), p = build(gp);
  const dlrt::CompileOptions assigns = dlrt::CompileOptions().with_run_assigns(true);
  dlrt::Executable fused = gf.compile({f.x}, {f.loss}, assigns);
  dlrt::Executable plain =
      gp.compile({p.x}, {p.loss}, dlrt::CompileOptions(assigns).with_graph_passes("none"));
  const std::string log = fused.pass_log();
  EXPECT_NE(log.find("fuse_bias_activation: bn1 (batch_norm_train) + act1 (relu) -> bn1 "
                     "(batch_norm_train, activation relu); backward "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("fuse_residual_tail: bn2 (batch_norm_train) + add2 (add) + act2 (relu) -> "
                     "bn2 (batch_norm_add_relu_train); backward "),
            std::string::npos)
      << log;
  // (An add stays: autodiff's sum of act1's two gradients, the conv's and the shortcut's.)
  for (const char* gone : {"relu", "relu_grad", "batch_norm_grad"})
    EXPECT_FALSE(has_op(fused, gone)) << gone << "\n" << log;
  EXPECT_NE(log.find("remove_dead_nodes: 6 nodes no longer read: act1 (relu), add2 (add), "),
            std::string::npos)
      << log;
  for (const char* op : {"batch_norm_train", "batch_norm_relu_grad", "batch_norm_add_relu_train",
                         "batch_norm_add_relu_grad"})
    EXPECT_TRUE(has_op(fused, op)) << op << "\n" << log;
  EXPECT_TRUE(has_op(plain, "relu_grad"));

  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {4, 5, 5, 3});
  xt.write(ramp(300, 0.1f, 1.f));
  for (int step = 0; step < 4; ++step) {
    const float a = run1(fused, xt)[0], b = run1(plain, xt)[0];
    EXPECT_NEAR(a, b, 1e-5f * std::max(1.f, std::fabs(b))) << "step " << step;
  }
  for (size_t i = 0; i < f.state.size(); ++i)
    expect_near(gf.read_variable<float>(f.state[i]), gp.read_variable<float>(p.state[i]), 1e-4f);
}

TEST(GraphPasses, OptionsAndSetting) {
  using dlrt::core::passes::PassSet;
  EXPECT_EQ(
      PassSet::parse("").to_string(),
      "fold_batch_norm,fuse_bias_activation,fuse_residual_tail,fold_constants,remove_dead_nodes");
  EXPECT_EQ(PassSet::parse("none").to_string(), "none");
  EXPECT_EQ(PassSet::parse("default,-fold_constants").to_string(),
            "fold_batch_norm,fuse_bias_activation,fuse_residual_tail,remove_dead_nodes");
  EXPECT_EQ(PassSet::parse("none, fuse_bias_activation").to_string(), "fuse_bias_activation");
  try {
    PassSet::parse("default,-fold_everything");
    ADD_FAILURE() << "an unknown pass was accepted";
  } catch (const dlrt::core::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'fold_everything' is not a pass"), std::string::npos);
  }

  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 3});
  dlrt::Value y =
      g.op1("relu",
            {g.op1("bias_add", {g.op1("matmul", {x, g.constant<float>("w", {3, 3}, ramp(9, 1.f))}),
                                g.constant<float>("b", {3}, {1, 2, 3})})});
  EXPECT_THROW(g.compile({x}, {y}, dlrt::CompileOptions().with_graph_passes("fold")), dlrt::Error);
  // Only the bias: the activation stays.
  dlrt::Executable only_bias =
      g.compile({x}, {y}, dlrt::CompileOptions().with_graph_passes("none,fuse_bias_activation"));
  EXPECT_TRUE(has_op(only_bias, "matmul_bias_act"));
  EXPECT_FALSE(has_op(only_bias, "relu"));  // both fusions are one pass
  // Without dead-node removal the replaced nodes still run (for debugging a pass).
  dlrt::Executable keep =
      g.compile({x}, {y}, dlrt::CompileOptions().with_graph_passes("default,-remove_dead_nodes"));
  EXPECT_TRUE(has_op(keep, "matmul"));
  EXPECT_TRUE(has_op(keep, "matmul_bias_act"));

  // DLRT_GRAPH_PASSES from the environment, read when the context is made.
  dlrt_test::set_env("DLRT_GRAPH_PASSES", "none");
  dlrt::Context off = cpu_context();
  dlrt_test::set_env("DLRT_GRAPH_PASSES", nullptr);
  dlrt::Graph h(off);
  dlrt::Value hx = h.placeholder("x", DLRT_F32, {2, 3});
  dlrt::Value hy =
      h.op1("relu", {h.op1("matmul", {hx, h.constant<float>("w", {3, 3}, ramp(9, 1.f))})});
  dlrt::Executable plain = h.compile({hx}, {hy});
  EXPECT_TRUE(has_op(plain, "relu"));
  EXPECT_EQ(plain.pass_log(), "");
}

// With the placement log on at info level, the passes' lines come first.
TEST(GraphPasses, LoggedBeforeThePlacementLogAtInfoLevel) {
  dlrt::Context ctx(dlrt::ContextOptions()
                        .plugin_path(DLRT_TEST_PLUGIN_DIR)
                        .search_default_paths(false)
                        .visible_devices("CPU")
                        .plugin_options("")
                        .log_level(DLRT_LOG_INFO));
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 3});
  dlrt::Value y =
      g.op1("sigmoid",
            {g.op1("bias_add", {g.op1("matmul", {x, g.constant<float>("w", {3, 2}, ramp(6, 1.f))}),
                                g.constant<float>("b", {2}, {1, 2})})},
            {}, "prob");
  dlrt::CompileOptions o;
  o.log_device_placement = true;
  testing::internal::CaptureStderr();
  dlrt::Executable ex = g.compile({x}, {y}, o);
  const std::string err = testing::internal::GetCapturedStderr();
  const size_t pass = err.find("graph pass fuse_bias_activation:");
  const size_t placed =
      err.find("prob: (matmul_bias_act): /job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_NE(pass, std::string::npos) << err;
  EXPECT_NE(placed, std::string::npos) << err;
  EXPECT_LT(pass, placed) << err;
}

}  // namespace
