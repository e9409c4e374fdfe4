// autodiff_test.cc: gradients() as a whole — a small MLP against finite differences, fan-out
// accumulation, zeros for what the loss does not depend on, the errors (non-scalar loss,
// integer wrt, ops without a rule on the path), the registry/rule-table agreement, names,
// and device requests inherited from the forward ops. Per-op rules: rules_test.cc.
#include "autodiff/autodiff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "autodiff/grad_check.hpp"
#include "ops/op_registry.hpp"

namespace dlrt::core::testing {
namespace {

const dlrt_dtype F = DLRT_F32;

// x (4,5) -> matmul w1 (5,6) -> bias_add b1 -> relu -> matmul_bias_act(w2 (6,3), b2, relu)
// -> sparse softmax cross-entropy with labels -> reduce_mean. Gradients of every weight.
TEST(Gradients, SmallMlpMatchesFiniteDifferences) {
  GradCheck c;
  Graph& g = c.graph();
  ValueRef x = c.data("x", {F, {4, 5}});  // fed, not differentiated
  ValueRef w1 = c.variable("w1", {F, {5, 6}});
  ValueRef b1 = c.variable("b1", {F, {6}});
  ValueRef w2 = c.variable("w2", {F, {6, 3}});
  ValueRef b2 = c.variable("b2", {F, {3}});
  ValueRef labels = c.index_input("labels", {DLRT_I64, {4}}, {0, 2, 1, 2});
  ValueRef h = c.op("relu", {c.op("bias_add", {c.op("matmul", {x, w1}), b1})});
  ValueRef logits = c.op("matmul_bias_act", {h, w2, b2}, {{"activation", "relu"}});
  ValueRef xent = c.op_all("sparse_softmax_cross_entropy", {logits, labels}).at(0);
  (void)g;
  c.check(c.op("reduce_mean", {xent}));
}

// The reference workload's shape in small: conv2d_bias_act(relu) -> max_pool2d -> flatten ->
// dropout -> matmul_bias_act -> cross-entropy -> mean.
TEST(Gradients, SmallCnnMatchesFiniteDifferences) {
  GradCheck c;
  ValueRef x = c.data("images", {F, {2, 6, 6, 1}});
  ValueRef k = c.variable("kernel", {F, {3, 3, 1, 2}});
  ValueRef kb = c.variable("kernel_bias", {F, {2}});
  ValueRef w = c.variable("dense", {F, {8, 3}});
  ValueRef wb = c.variable("dense_bias", {F, {3}});
  ValueRef labels = c.index_input("labels", {DLRT_I32, {2}}, {1, 2});
  ValueRef h = c.op("conv2d_bias_act", {x, k, kb}, {{"activation", "relu"}});  // (2,4,4,2)
  h = c.op("flatten", {c.op("max_pool2d", {h})});                              // (2,8)
  h = c.op("dropout", {h}, {{"rate", 0.25}, {"seed", 5}});
  ValueRef logits = c.op("matmul_bias_act", {h, w, wb});
  ValueRef xent = c.op_all("sparse_softmax_cross_entropy", {logits, labels}).at(0);
  c.check(c.op("reduce_mean", {xent}));
}

// x feeds three consumers; its gradient is the sum of three contributions.
TEST(Gradients, FanOutAccumulates) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {2, 3}});
  ValueRef y = c.op("add", {c.op("mul", {x, x}), c.op("exp", {x})});
  ValueRef loss = c.project({y});
  const size_t before = c.graph().nodes().size();
  c.check(loss);
  size_t accumulate = 0;
  for (size_t n = before; n < c.graph().nodes().size(); ++n) {
    const Node& node = c.graph().node(NodeId(n));
    EXPECT_TRUE(node.is_gradient) << node.name;
    EXPECT_EQ(node.name.rfind("gradients/", 0), 0u) << node.name;
    if (node.name.find("gradients/x/accumulate") == 0) {
      ++accumulate;
      EXPECT_EQ(node.op, "add");
    }
  }
  EXPECT_EQ(accumulate, 2u);  // three contributions, two adds
}

// A wrt value and a value computed from it: each gets its total derivative.
TEST(Gradients, IntermediateAndLossAsWrt) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {3}});
  ValueRef h = c.op("tanh", {x});
  ValueRef loss = c.op("reduce_sum", {c.op("add", {h, x})});  // sum(tanh(x) + x)
  std::vector<ValueRef> g = gradients(c.graph(), loss, {x, h, loss});
  HostEval ev(c.graph());
  const std::vector<double> xv = {0.1, -0.2, 0.3};
  ev.feed(x, xv);
  EXPECT_DOUBLE_EQ(ev.eval_scalar(g[2]), 1.0);  // d loss / d loss
  const std::vector<double> dx = ev.eval(g[0]), dh = ev.eval(g[1]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(dh[i], 1.0);
    // The total derivative: through h (1 - tanh^2) and directly (1).
    EXPECT_NEAR(dx[i], 2.0 - std::tanh(xv[i]) * std::tanh(xv[i]), 1e-12);
  }
}

TEST(Gradients, UnrelatedWrtGetsZeros) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {2}});
  ValueRef z = c.graph().add_placeholder("z", {F, {3, 2}});
  ValueRef loss = c.project({c.op("exp", {x})});
  std::vector<ValueRef> g = gradients(c.graph(), loss, {z});
  const Node& n = c.graph().node(g[0].node);
  EXPECT_EQ(n.op, "fill");
  EXPECT_TRUE(n.is_gradient);
  EXPECT_EQ(c.graph().type_of(g[0]), (ops::TensorType{F, {3, 2}}));
  HostEval ev(c.graph());
  EXPECT_EQ(ev.eval(g[0]), std::vector<double>(6, 0.0));
}

// x -> cast to i32 -> cast back: no gradient flows through integers; x gets zeros.
TEST(Gradients, IntegerCastStopsTheGradient) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {4}});
  ValueRef back = c.op("cast", {c.op("cast", {x}, {{"dtype", DLRT_I32}})}, {{"dtype", F}});
  ValueRef loss = c.project({back});
  std::vector<ValueRef> g = gradients(c.graph(), loss, {x});
  HostEval ev(c.graph());
  EXPECT_EQ(ev.eval(g[0]), std::vector<double>(4, 0.0));
}

// loss = sum(stop_gradient(x*x) + exp(x)) + sum(stop_gradient(x) * x): the stopped paths give
// nothing, so d loss/dx = exp(x) + x (not exp(x) + 2x + 2x). Ops behind a stop_gradient are
// off the path: an argmax there needs no rule.
TEST(Gradients, StopGradientCutsOnlyItsPath) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {4}});
  ValueRef sq = c.op("stop_gradient", {c.op("mul", {x, x})});
  ValueRef a = c.op("reduce_sum", {c.op("add", {sq, c.op("exp", {x})})});
  ValueRef b = c.op("reduce_sum", {c.op("mul", {c.op("stop_gradient", {x}), x})});
  ValueRef idx = c.op("argmax", {c.op("stop_gradient", {x})}, {{"axis", 0}});
  ValueRef arg = c.op("reduce_sum", {c.op("cast", {idx}, {{"dtype", F}})});
  ValueRef loss = c.op("add", {c.op("add", {a, b}), arg});
  std::vector<ValueRef> g = gradients(c.graph(), loss, {x});
  HostEval ev(c.graph());
  const std::vector<double> xv = {0.5, -1.0, 2.0, 0.25};
  ev.feed(x, xv);
  const std::vector<double> dx = ev.eval(g[0]);
  ASSERT_EQ(dx.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(dx[i], std::exp(xv[i]) + xv[i], 1e-9) << i;
  // The forward value is untouched: stop_gradient is the identity.
  EXPECT_NEAR(ev.eval_scalar(b), 0.25 + 1.0 + 4.0 + 0.0625, 1e-9);

  // Only through stop_gradient: zeros, as for an unrelated value.
  ValueRef only = c.op("reduce_sum", {c.op("stop_gradient", {c.op("exp", {x})})});
  std::vector<ValueRef> g2 = gradients(c.graph(), only, {x});
  EXPECT_EQ(c.graph().node(g2[0].node).op, "fill");
  HostEval ev2(c.graph());
  ev2.feed(x, xv);
  EXPECT_EQ(ev2.eval(g2[0]), std::vector<double>(4, 0.0));
}

TEST(Gradients, LossMustBeAFloatScalar) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {2, 3}});
  ValueRef y = c.op("exp", {x});
  auto [code, msg] = error_of([&] { gradients(c.graph(), y, {x}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("f32(2,3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
  // (1,1) is a scalar in all but rank.
  ValueRef s = c.op("reduce_sum", {y}, {{"keepdims", true}});
  EXPECT_EQ(error_of([&] { gradients(c.graph(), s, {x}); }).first, DLRT_OK);
  ValueRef labels = c.index_input("l", {DLRT_I32, {}}, {1});
  EXPECT_EQ(error_of([&] { gradients(c.graph(), labels, {x}); }).first, DLRT_INVALID_ARGUMENT);
  auto bad_wrt = error_of([&] { gradients(c.graph(), s, {labels}); });
  EXPECT_EQ(bad_wrt.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_wrt.second.find("wrt[0]"), std::string::npos) << bad_wrt.second;
  EXPECT_EQ(error_of([&] {
              gradients(c.graph(), s, {ValueRef{999, 0}});
            }).first,
            DLRT_INVALID_ARGUMENT);
}

// x -> argmax -> cast -> loss: UNIMPLEMENTED naming argmax; nothing added to the graph.
TEST(Gradients, ArgmaxOnThePathIsUnimplemented) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {3, 4}});
  ValueRef idx = c.op("argmax", {x});
  ValueRef loss = c.project({c.op("exp", {x}), c.op("cast", {idx}, {{"dtype", F}})});
  const size_t before = c.graph().nodes().size();
  auto [code, msg] = error_of([&] { gradients(c.graph(), loss, {x}); });
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg.find("'argmax'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 'argmax'"), std::string::npos) << msg;
  EXPECT_EQ(c.graph().nodes().size(), before);
  // With respect to something argmax does not depend on, argmax is off the path: fine.
  ValueRef other = c.input("other", {F, {3, 4}});
  ValueRef loss2 = c.op("add", {loss, c.project({other})});
  EXPECT_EQ(error_of([&] { gradients(c.graph(), loss2, {other}); }).first, DLRT_OK);
}

TEST(Gradients, GatherRowsParamsIsUnimplemented) {
  GradCheck c;
  ValueRef params = c.input("params", {F, {5, 3}});
  ValueRef idx = c.index_input("idx", {DLRT_I32, {2}}, {4, 1});
  ValueRef loss = c.project({c.op("gather_rows", {params, idx})});
  auto [code, msg] = error_of([&] { gradients(c.graph(), loss, {params}); });
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg.find("gather_rows"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scatter"), std::string::npos) << msg;
}

// Every op with a differentiable input has a rule (gather_rows excepted, see above), and every
// rule is for an op of the registry.
TEST(Gradients, EveryDifferentiableOpHasARule) {
  const std::vector<std::string> names = ops_with_gradient_rules();
  const std::set<std::string> rules(names.begin(), names.end());
  const std::set<std::string> known_missing = {"gather_rows"};
  std::set<std::string> registry;
  for (const ops::OpDef* def : ops::all_ops()) {
    registry.insert(def->name);
    const bool differentiable =
        std::any_of(def->inputs.begin(), def->inputs.end(),
                    [](const ops::InputSpec& in) { return in.differentiable; });
    if (differentiable && !known_missing.count(def->name))
      EXPECT_TRUE(rules.count(def->name)) << def->name << " has a differentiable input but no rule";
    if (!differentiable)
      EXPECT_FALSE(rules.count(def->name)) << def->name << " is not differentiable";
  }
  for (const std::string& r : rules) EXPECT_TRUE(registry.count(r)) << r << " is not an op";
}

// Gradient nodes take the requested device of the op they differentiate, not the scope open
// when gradients() is called; the seed takes the loss's.
TEST(Gradients, GradientNodesInheritDeviceRequests) {
  GradCheck c;
  Graph& g = c.graph();
  ValueRef x = c.input("x", {F, {2, 4}});
  ValueRef w = c.input("w", {F, {4, 3}});
  g.push_device("/device:REF:1");
  ValueRef y = c.op("matmul", {x, w});
  g.pop_device();
  g.push_device("/GPU:0");
  ValueRef t = c.op("tanh", {y});
  g.pop_device();
  ValueRef loss = c.op("reduce_sum", {t});
  g.push_device("/device:CPU:0");  // open while differentiating: must not leak in
  const size_t before = g.nodes().size();
  std::vector<ValueRef> grads = gradients(g, loss, {x, w});
  g.pop_device();
  ASSERT_GT(g.nodes().size(), before);
  for (size_t n = before; n < g.nodes().size(); ++n) {
    const Node& node = g.node(NodeId(n));
    std::string expect;
    if (node.name.rfind("gradients/matmul/", 0) == 0) expect = "/device:REF:1";
    else if (node.name.rfind("gradients/tanh/", 0) == 0) expect = "/GPU:0";
    else if (node.name.rfind("gradients/reduce_sum/", 0) == 0) expect = "";
    else ADD_FAILURE() << "unexpected gradient node " << node.name;
    EXPECT_EQ(node.requested_device, expect) << node.name;
    EXPECT_EQ(node.requested.has_value(), !expect.empty()) << node.name;
    if (node.requested && expect == "/device:REF:1") EXPECT_EQ(node.requested->type, "REF");
  }
  EXPECT_EQ(g.node(grads[0].node).requested_device, "/device:REF:1");
  EXPECT_EQ(g.node(grads[1].node).requested_device, "/device:REF:1");
  c.check(loss);
}

// A second gradients() call over the same ops makes new, uniquely named nodes.
TEST(Gradients, RepeatedCallsGetUniqueNames) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {2, 2}});
  ValueRef y = c.op("sigmoid", {x});
  ValueRef loss = c.project({y});
  ValueRef g1 = gradients(c.graph(), loss, {x})[0];
  ValueRef g2 = gradients(c.graph(), loss, {x})[0];
  EXPECT_NE(g1, g2);
  EXPECT_EQ(c.graph().node(g1.node).name, "gradients/sigmoid/sigmoid_grad");
  EXPECT_EQ(c.graph().node(g2.node).name, "gradients/sigmoid/sigmoid_grad_1");
  HostEval ev(c.graph());
  ev.feed(x, {0.1, 0.2, 0.3, 0.4});
  EXPECT_EQ(ev.eval(g1), ev.eval(g2));
}

}  // namespace
}  // namespace dlrt::core::testing
