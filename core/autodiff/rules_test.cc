// rules_test.cc: every gradient rule against central finite differences.
//
// Each test builds x -> op -> loss = sum(op(x) * r) (r a random constant, see grad_check.hpp),
// asks gradients() for d loss / d x, and compares each element with the slope of the loss,
// all evaluated in f64 by the reference kernels. Attributes cover the cases a rule branches
// on: padding, strides, dilations, data formats, transpose flags, activations, broadcasting,
// reduced axes and keepdims.
#include <gtest/gtest.h>

#include <cstring>

#include "autodiff/grad_check.hpp"
#include "autodiff/rules.hpp"
#include "ops/op_registry.hpp"

namespace dlrt::core::testing {
namespace {

const dlrt_dtype F = DLRT_F32;

// One op on float inputs of the given dims (values of the given kind), projected; checked.
void check_op(const std::string& op, const std::vector<ops::Dims>& inputs,
              const ops::AttrMap& attrs = {}, Values kind = Values::kSigned) {
  SCOPED_TRACE(op);
  GradCheck c;
  std::vector<ValueRef> xs;
  for (size_t i = 0; i < inputs.size(); ++i)
    xs.push_back(c.input("x" + std::to_string(i), {F, inputs[i]}, kind));
  c.check(c.project(c.op_all(op, xs, attrs)));
}

// The schema says which ops have no gradient and why (OpDef::no_gradient); every other op has
// a rule here. A new differentiable op without a rule, or a rule for an op the schema calls
// non-differentiable, fails.
TEST(GradientRules, EveryOpHasARuleOrItsSchemaSaysWhyNot) {
  for (const ops::OpDef* def : ops::all_ops()) {
    const bool has_rule = autodiff::rules().count(def->name) != 0;
    EXPECT_NE(has_rule, !def->no_gradient.empty())
        << def->name
        << (has_rule ? ": has a rule and a no_gradient reason"
                     : ": needs a gradient rule or OpDef::gradient_free(reason)");
  }
}

// ---- conv_pool ------------------------------------------------------------------------------

TEST(GradientRules, Conv2d) {
  check_op("conv2d", {{1, 4, 4, 2}, {2, 2, 2, 3}});
  check_op("conv2d", {{2, 5, 5, 1}, {3, 3, 1, 2}}, {{"strides", {2, 2}}, {"padding", "SAME"}});
  check_op("conv2d", {{1, 5, 6, 1}, {2, 2, 1, 2}}, {{"dilations", {2, 2}}});
  check_op("conv2d", {{1, 2, 4, 5}, {2, 3, 2, 2}},
           {{"data_format", "NCHW"}, {"padding", "SAME"}, {"strides", {1, 2}}});
}

// Grouped and depthwise: the rule passes groups on to both backward ops.
TEST(GradientRules, Conv2dGroups) {
  check_op("conv2d", {{1, 5, 5, 4}, {3, 3, 2, 6}}, {{"groups", 2}});
  check_op("conv2d", {{2, 6, 5, 3}, {3, 3, 1, 6}},
           {{"groups", 3}, {"padding", "SAME"}, {"strides", {2, 1}}});  // depthwise x2
  check_op("conv2d", {{1, 4, 7, 6}, {2, 2, 1, 4}},
           {{"groups", 4}, {"data_format", "NCHW"}, {"dilations", {1, 2}}});
  check_op("conv2d_bias_act", {{1, 4, 4, 2}, {2, 2, 1, 4}, {4}},
           {{"groups", 2}, {"activation", "tanh"}, {"padding", "SAME"}});
}

TEST(GradientRules, Conv2dBiasAct) {
  for (const char* act : {"none", "relu", "sigmoid", "tanh"}) {
    SCOPED_TRACE(act);
    check_op("conv2d_bias_act", {{1, 4, 4, 2}, {2, 2, 2, 3}, {3}}, {{"activation", act}});
  }
  check_op("conv2d_bias_act", {{1, 3, 4, 4}, {3, 3, 3, 2}, {2}},
           {{"activation", "tanh"}, {"data_format", "NCHW"}, {"padding", "SAME"}});
}

// conv2d_bias_act(relu) read only by a max_pool2d: the rule emits the fused
// max_pool2d_backward_relu_bias for dz and db (checked in the gradient graph) and the result
// still matches finite differences; 2x2/2 VALID and 3x3/2 SAME pools, NHWC and NCHW. A second
// reader of the conv's output keeps the unfused ops.
TEST(GradientRules, Conv2dBiasActReluThenMaxPoolFuses) {
  struct Case {
    ops::Dims x, w;
    ops::AttrMap conv, pool;
  };
  const Case cases[] = {
      {{1, 6, 6, 2}, {3, 3, 2, 3}, {}, {}},
      {{2, 7, 7, 2}, {2, 2, 2, 2}, {}, {{"ksize", {3, 3}}, {"strides", {2, 2}}, {"padding", "SAME"}}},
      {{1, 2, 6, 6}, {3, 3, 2, 2}, {{"data_format", "NCHW"}}, {{"data_format", "NCHW"}}},
  };
  auto count_op = [](GradCheck& c, const std::string& op) {
    int k = 0;
    for (const Node& n : c.graph().nodes()) k += n.op == op;
    return k;
  };
  for (const Case& k : cases) {
    for (bool second_reader : {false, true}) {
      SCOPED_TRACE(ops::format_dims(k.x) + (second_reader ? " read twice" : ""));
      GradCheck c;
      ValueRef x = c.input("x", {F, k.x});
      ValueRef w = c.input("w", {F, k.w});
      // The bias shifted down by 1: most windows then hold some cut (zero) cells and some
      // only cut ones, where the mask decides the gradient.
      ValueRef b = c.input("b", {F, {k.w[3]}});
      std::vector<uint8_t> minus_one(sizeof(float) * size_t(k.w[3]));
      for (size_t i = 0; i < size_t(k.w[3]); ++i) {
        const float v = -1.f;
        std::memcpy(minus_one.data() + i * sizeof(float), &v, sizeof(float));
      }
      b = c.op("add", {b, c.graph().add_constant("", {F, {k.w[3]}}, std::move(minus_one))});
      ops::AttrMap conv = k.conv;
      conv["activation"] = std::string("relu");
      ValueRef y = c.op("conv2d_bias_act", {x, w, b}, conv);
      ValueRef p = c.op("max_pool2d", {y}, k.pool);
      c.check(second_reader ? c.project({p, y}) : c.project({p}));
      EXPECT_EQ(count_op(c, "max_pool2d_backward_relu_bias"), second_reader ? 0 : 1);
    }
  }
}

// A value read by a conv and by other ops (a residual block's input): its gradient's
// contributions are summed into the conv's backward-data pass, conv2d_backward_data_add, and
// no add is left for the sum (but one per further contribution); the gradients match finite
// differences. Two convs reading x: one of them takes the other's pass as its addend. Strided
// SAME (oneDNN's pass plus its add step on cpu) and NCHW too.
TEST(GradientRules, ConvInputReadTwiceAccumulatesIntoTheBackwardDataPass) {
  auto count_op = [](GradCheck& c, const std::string& op) {
    int k = 0;
    for (const Node& n : c.graph().nodes()) k += n.op == op && n.is_gradient;
    return k;
  };
  struct Case {
    ops::Dims x, w;
    ops::AttrMap conv;
  };
  const Case cases[] = {
      {{2, 6, 6, 2}, {3, 3, 2, 2}, {{"padding", "SAME"}}},
      {{1, 7, 7, 3}, {3, 3, 3, 3}, {{"padding", "SAME"}, {"strides", ops::Ints{2, 2}}}},
      {{1, 2, 5, 5}, {3, 3, 2, 2}, {{"padding", "SAME"}, {"data_format", "NCHW"}}},
  };
  for (const Case& k : cases)
    for (int readers : {2, 3}) {
      SCOPED_TRACE(ops::format_dims(k.x) + " readers " + std::to_string(readers));
      GradCheck c;
      ValueRef x = c.input("x", {F, k.x});
      ValueRef w = c.input("w", {F, k.w});
      ValueRef y = c.op("conv2d", {x, w}, k.conv);
      std::vector<ValueRef> out = {y, c.op("tanh", {x})};
      if (readers == 3) out.push_back(c.op("conv2d", {x, c.input("w2", {F, k.w})}, k.conv));
      c.check(c.project(out));
      EXPECT_EQ(count_op(c, "conv2d_backward_data_add"), 1);
      EXPECT_EQ(count_op(c, "conv2d_backward"), 0);  // x has other readers: the parts apart
      // x's contributions: the tanh's and one conv's summed by adds (none with two readers),
      // the last conv's pass starting from their sum.
      int adds = 0;
      for (const Node& n : c.graph().nodes())
        adds += n.op == "add" && n.is_gradient && n.name.find("accumulate") != std::string::npos;
      EXPECT_EQ(adds, readers - 2);
    }
}

// Both gradients of a conv whose x nothing else reads come from one conv2d_backward (and its
// gradients match finite differences); with only one of them wanted, the part's own op.
TEST(GradientRules, ConvWithOneReaderGetsBothGradientsFromOneOp) {
  auto count_op = [](GradCheck& c, const std::string& op) {
    int k = 0;
    for (const Node& n : c.graph().nodes()) k += n.op == op && n.is_gradient;
    return k;
  };
  for (int wanted = 0; wanted < 3; ++wanted) {  // 0 both, 1 x only, 2 w only
    SCOPED_TRACE("wanted " + std::to_string(wanted));
    GradCheck c;
    ValueRef x = wanted == 2 ? c.data("x", {F, {2, 6, 6, 3}}) : c.input("x", {F, {2, 6, 6, 3}});
    ValueRef w = wanted == 1 ? c.data("w", {F, {3, 3, 3, 2}}) : c.input("w", {F, {3, 3, 3, 2}});
    c.check(c.project({c.op("conv2d", {x, w}, {{"padding", "SAME"}, {"strides", ops::Ints{2, 1}}})}));
    EXPECT_EQ(count_op(c, "conv2d_backward"), wanted == 0 ? 1 : 0);
    EXPECT_EQ(count_op(c, "conv2d_backward_data"), wanted == 1 ? 1 : 0);
    EXPECT_EQ(count_op(c, "conv2d_backward_filter"), wanted == 2 ? 1 : 0);
  }
}

// dx = conv2d(dy, w), dw = conv2d_backward_filter(dy, x), both with the resolved pads: strides
// 1 and 2, VALID and SAME (an even kernel's symmetric crop among them), output_padding 0 and 1,
// dilation, explicit pads, NCHW.
TEST(GradientRules, Conv2dTranspose) {
  check_op("conv2d_transpose", {{1, 3, 3, 2}, {2, 2, 3, 2}});
  check_op("conv2d_transpose", {{2, 3, 2, 1}, {3, 3, 2, 1}},
           {{"strides", {2, 2}}, {"padding", "SAME"}});
  check_op("conv2d_transpose", {{1, 3, 3, 2}, {3, 3, 2, 2}},
           {{"strides", {2, 2}}, {"padding", "SAME"}, {"output_padding", {1, 0}}});
  check_op("conv2d_transpose", {{1, 3, 3, 1}, {2, 2, 2, 1}},
           {{"strides", {2, 2}}, {"padding", "SAME"}, {"output_padding", {0, 0}}});
  check_op("conv2d_transpose", {{1, 3, 2, 2}, {3, 2, 1, 2}},
           {{"strides", {2, 1}}, {"padding", "VALID"}, {"output_padding", {1, 0}}});
  check_op("conv2d_transpose", {{1, 3, 3, 1}, {2, 2, 2, 1}}, {{"dilations", {2, 2}}});
  check_op("conv2d_transpose", {{1, 2, 3, 3}, {3, 2, 2, 2}},
           {{"data_format", "NCHW"}, {"strides", {2, 2}}, {"padding", "SAME"}});
  check_op("conv2d_transpose", {{1, 3, 3, 2}, {3, 3, 2, 2}},
           {{"strides", {2, 2}}, {"padding", "EXPLICIT"}, {"pads", {1, 0, 0, 2}}});
}

TEST(GradientRules, Pooling) {
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    check_op(op, {{1, 4, 4, 2}});
    check_op(op, {{2, 5, 5, 2}}, {{"ksize", {3, 3}}, {"strides", {2, 2}}, {"padding", "SAME"}});
    check_op(op, {{1, 2, 5, 4}}, {{"data_format", "NCHW"}, {"strides", {1, 1}}});
  }
}

// ---- matmul and bias ------------------------------------------------------------------------

TEST(GradientRules, MatmulAllTransposeCases) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transpose_a=") + (ta ? "1" : "0") +
                   " transpose_b=" + (tb ? "1" : "0"));
      const ops::Dims a = ta ? ops::Dims{4, 3} : ops::Dims{3, 4};
      const ops::Dims b = tb ? ops::Dims{2, 4} : ops::Dims{4, 2};
      check_op("matmul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
    }
}

// Every transpose pair on equal batches, broadcasting both ways, and a rank-2 operand on either
// side (its gradient is summed over the whole batch).
TEST(GradientRules, BatchMatmul) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transpose_a=") + (ta ? "1" : "0") +
                   " transpose_b=" + (tb ? "1" : "0"));
      const ops::Dims a = ta ? ops::Dims{2, 4, 3} : ops::Dims{2, 3, 4};
      const ops::Dims b = tb ? ops::Dims{2, 2, 4} : ops::Dims{2, 4, 2};
      check_op("batch_matmul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
    }
  check_op("batch_matmul", {{2, 1, 3, 4}, {1, 3, 4, 2}});
  check_op("batch_matmul", {{2, 1, 4, 3}, {1, 3, 2, 4}}, {{"transpose_a", true}, {"transpose_b", true}});
  check_op("batch_matmul", {{3, 2, 4}, {4, 5}});
  check_op("batch_matmul", {{2, 3}, {2, 2, 3, 2}});
}

TEST(GradientRules, MatmulBiasAct) {
  for (const char* act : {"none", "relu", "sigmoid", "tanh"}) {
    SCOPED_TRACE(act);
    check_op("matmul_bias_act", {{3, 4}, {4, 5}, {5}}, {{"activation", act}});
  }
  check_op("matmul_bias_act", {{4, 3}, {5, 4}, {5}},
           {{"activation", "sigmoid"}, {"transpose_a", true}, {"transpose_b", true}});
}

TEST(GradientRules, BiasAdd) {
  check_op("bias_add", {{2, 3, 4}, {4}});
  check_op("bias_add", {{2, 3, 2, 2}, {3}}, {{"data_format", "NCHW"}});
}

// ---- activations, softmax, losses, dropout ----------------------------------------------

TEST(GradientRules, Activations) {
  check_op("relu", {{3, 4}}, {}, Values::kAwayFromZero);
  check_op("leaky_relu", {{3, 4}}, {{"alpha", 0.2}}, Values::kAwayFromZero);
  check_op("leaky_relu", {{2, 5}}, {}, Values::kAwayFromZero);  // default alpha 0.01
  check_op("sigmoid", {{3, 4}});
  check_op("tanh", {{2, 3, 2}});
}

// Values kSigned are in [-1, 1); scale them where a test needs the far pieces of a function.
TEST(GradientRules, MoreActivations) {
  check_op("elu", {{3, 4}}, {}, Values::kAwayFromZero);
  check_op("elu", {{2, 5}}, {{"alpha", 0.5}}, Values::kAwayFromZero);
  check_op("gelu", {{3, 4}});
  check_op("gelu", {{3, 4}}, {{"approximate", "tanh"}});
  check_op("silu", {{2, 3, 2}});
  check_op("softplus", {{3, 4}});
  check_op("mish", {{3, 4}});
  check_op("abs", {{3, 4}}, {}, Values::kAwayFromZero);
  // Bounds inside [-1, 1) so both clipped pieces and the middle are hit; the kinks are unlikely
  // to be within eps of a random value.
  check_op("clip", {{4, 5}}, {{"min", -0.5}, {"max", 0.3}});
  check_op("clip", {{4, 5}}, {{"max", 0.0}});
}

// hard_swish on x scaled by 4 (kSigned gives [-1, 1), inside the middle piece): all three
// pieces, x < -3, -3 <= x <= 3 and x > 3.
TEST(GradientRules, HardSwishAllPieces) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {5, 4}});
  ValueRef four = c.op("fill", {}, {{"shape", ops::Ints{}}, {"value", 4.0}, {"dtype", F}});
  c.check(c.project({c.op("hard_swish", {c.op("mul", {x, four})})}));
}

// mish on x scaled by 6: its minimum near -1.2, the negative tail and the near-identity side.
TEST(GradientRules, MishWideRange) {
  GradCheck c;
  ValueRef x = c.input("x", {F, {5, 4}});
  ValueRef six = c.op("fill", {}, {{"shape", ops::Ints{}}, {"value", 6.0}, {"dtype", F}});
  c.check(c.project({c.op("mish", {c.op("mul", {x, six})})}));
}

TEST(GradientRules, SquareRsqrt) {
  check_op("square", {{2, 3}});
  check_op("rsqrt", {{2, 3}}, {}, Values::kPositive);
}

// maximum/minimum broadcast like add; pow on positive bases (d/db needs log(a)).
TEST(GradientRules, MaximumMinimumPow) {
  const std::vector<std::vector<ops::Dims>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3, 4}, {3, 1}}, {{1, 4}, {3, 1}}, {{2, 3}, {}}};
  for (const char* op : {"maximum", "minimum"})
    for (const auto& s : shapes) check_op(op, s);
  for (const auto& s : shapes) check_op("pow", s, {}, Values::kPositive);
}

// Ties go to a (TensorFlow's choice): with a == b everywhere, d sum(max(a, b)) / da is 1 and
// d / db is 0 (finite differences cannot see this: the function has a kink there). The
// elements where a != b check that the other side still gets its share.
TEST(GradientRules, MaximumMinimumTiesGoToA) {
  for (const char* op : {"maximum", "minimum"}) {
    SCOPED_TRACE(op);
    GradCheck c;
    Graph& g = c.graph();
    ValueRef a = g.add_placeholder("a", {F, {4}});
    ValueRef b = g.add_placeholder("b", {F, {4}});
    ValueRef loss = c.op("reduce_sum", {c.op(op, {a, b})});
    std::vector<ValueRef> grads = gradients(g, loss, {a, b});
    HostEval ev(g);
    ev.feed(a, {1.0, -2.0, 0.5, 3.0});
    ev.feed(b, {1.0, -2.0, 2.0, -1.0});  // ties, ties, b larger, a larger
    const bool max = std::string(op) == "maximum";
    const std::vector<double> da = ev.eval(grads[0]), db = ev.eval(grads[1]);
    EXPECT_EQ(da, (std::vector<double>{1, 1, max ? 0.0 : 1.0, max ? 1.0 : 0.0}));
    EXPECT_EQ(db, (std::vector<double>{0, 0, max ? 1.0 : 0.0, max ? 0.0 : 1.0}));
  }
}

// where(cond, x, y), cond = (d > 0) from random data, broadcast three ways.
TEST(GradientRules, Where) {
  const std::vector<std::vector<ops::Dims>> shapes = {
      {{2, 3}, {2, 3}, {2, 3}}, {{2, 3, 4}, {3, 1}, {4}}, {{3}, {2, 1}, {}}};
  for (const auto& s : shapes) {
    GradCheck c;
    ValueRef d = c.data("d", {F, s[0]});
    ValueRef zero = c.op("fill", {}, {{"shape", ops::Ints{}}, {"value", 0.0}, {"dtype", F}});
    ValueRef cond = c.op("greater", {d, zero});
    ValueRef x = c.input("x", {F, s[1]});
    ValueRef y = c.input("y", {F, s[2]});
    c.check(c.project({c.op("where", {cond, x, y})}));
  }
}

TEST(GradientRules, Softmax) {
  check_op("softmax", {{3, 5}});
  check_op("softmax", {{3, 5}}, {{"axis", 0}});
  check_op("log_softmax", {{3, 5}});
  check_op("log_softmax", {{2, 3, 4}}, {{"axis", 1}});
}

// Both outputs are projected: the loss path (backprop * dloss) and the path through the
// backprop output (the softmax Jacobian).
TEST(GradientRules, SparseSoftmaxCrossEntropy) {
  for (dlrt_dtype label_type : {DLRT_I32, DLRT_I64}) {
    GradCheck c;
    ValueRef logits = c.input("logits", {F, {3, 4}});
    ValueRef labels = c.index_input("labels", {label_type, {3}}, {2, 0, 3});
    c.check(c.project(c.op_all("sparse_softmax_cross_entropy", {logits, labels})));
  }
  // Only the loss output used, as in training.
  GradCheck c;
  ValueRef logits = c.input("logits", {F, {4, 3}});
  ValueRef labels = c.index_input("labels", {DLRT_I32, {4}}, {1, 0, 2, 1});
  ValueRef loss = c.op_all("sparse_softmax_cross_entropy", {logits, labels}).at(0);
  c.check(c.op("reduce_mean", {loss}));
}

TEST(GradientRules, Dropout) {
  check_op("dropout", {{4, 5}}, {{"rate", 0.5}, {"seed", 11}});
  check_op("dropout", {{3, 3}}, {{"rate", 0.0}});
}

// ---- batch normalization --------------------------------------------------------------------

// The shapes of the schema's samples that the rules branch on: NHWC, NCHW, rank 2, and one
// value per channel (zero batch variance: y = bias, so dx must be 0).
struct NormCase {
  ops::Dims x;
  const char* format;
};
const NormCase kNormCases[] = {
    {{2, 3, 3, 3}, "NHWC"}, {{2, 3, 2, 3}, "NCHW"}, {{5, 4}, "NHWC"}, {{1, 1, 1, 3}, "NHWC"}};

// The training form: dx through the batch mean and variance, dscale, dbias (batch_norm_grad).
// The running statistics do not change y; they are fed as data, not differentiated.
// With activation relu too: the rule's batch_norm_relu_grad against finite differences of the
// fused forward pass.
TEST(GradientRules, BatchNormTrain) {
  for (const char* act : {"none", "relu"})
  for (const NormCase& n : kNormCases) {
    SCOPED_TRACE(ops::format_dims(n.x) + " " + n.format + " activation " + act);
    const int64_t ch = n.x.size() == 4 && std::string(n.format) == "NCHW" ? n.x[1] : n.x.back();
    GradCheck c;
    ValueRef x = c.input("x", {F, n.x});
    ValueRef scale = c.input("scale", {F, {ch}}, Values::kPositive);
    ValueRef bias = c.input("bias", {F, {ch}});
    ValueRef rm = c.data("running_mean", {F, {ch}});
    ValueRef rv = c.data("running_var", {F, {ch}});
    std::vector<ValueRef> outs =
        c.op_all("batch_norm_train", {x, scale, bias, rm, rv},
                 {{"data_format", n.format}, {"epsilon", 1e-3}, {"activation", act}});
    c.check(c.project({outs[0]}));
  }
}

// The residual tail batch_norm_add_relu_train: dx, dresidual, dscale, dbias through
// batch_norm_add_relu_grad (mask from y) against finite differences of the forward pass;
// also with the residual's gradient alone wanted (x frozen as data).
TEST(GradientRules, BatchNormAddReluTrain) {
  for (bool x_wanted : {true, false})
  for (const NormCase& n : kNormCases) {
    SCOPED_TRACE(ops::format_dims(n.x) + " " + n.format + (x_wanted ? "" : ", x as data"));
    const int64_t ch = n.x.size() == 4 && std::string(n.format) == "NCHW" ? n.x[1] : n.x.back();
    GradCheck c;
    ValueRef x = x_wanted ? c.input("x", {F, n.x}) : c.data("x", {F, n.x});
    ValueRef r = c.input("residual", {F, n.x});
    ValueRef scale = c.input("scale", {F, {ch}}, Values::kPositive);
    ValueRef bias = c.input("bias", {F, {ch}});
    ValueRef rm = c.data("running_mean", {F, {ch}});
    ValueRef rv = c.data("running_var", {F, {ch}});
    std::vector<ValueRef> outs = c.op_all("batch_norm_add_relu_train", {x, r, scale, bias, rm, rv},
                                          {{"data_format", n.format}, {"epsilon", 1e-3}});
    c.check(c.project({outs[0]}));
  }
}

// lstm_cell: dzx, dh, dc and dU through lstm_cell_grad and the two matmuls; both outputs
// used, only h' (c' absent: zeros), only c', and two steps chained (h' and c' of the first
// step are the second's state, so dh and dc flow back through a cell), for several B, H.
TEST(GradientRules, LstmCell) {
  struct Case {
    int64_t b, h;
  };
  for (const Case& k : {Case{1, 1}, Case{2, 3}, Case{3, 5}}) {
    for (int used = 0; used < 4; ++used) {  // 0 both, 1 h' only, 2 c' only, 3 two steps
      SCOPED_TRACE("B " + std::to_string(k.b) + " H " + std::to_string(k.h) + " case " +
                   std::to_string(used));
      GradCheck c;
      ValueRef zx = c.input("zx", {F, {k.b, 4 * k.h}});
      ValueRef h = c.input("h", {F, {k.b, k.h}});
      ValueRef cs = c.input("c", {F, {k.b, k.h}});
      ValueRef u = c.input("U", {F, {k.h, 4 * k.h}});
      std::vector<ValueRef> o = c.op_all("lstm_cell", {zx, h, cs, u});
      if (used == 0) c.check(c.project({o[0], o[1]}));
      if (used == 1) c.check(c.project({o[0]}));
      if (used == 2) c.check(c.project({o[1]}));
      if (used == 3) {
        ValueRef zx2 = c.input("zx2", {F, {k.b, 4 * k.h}});
        std::vector<ValueRef> o2 = c.op_all("lstm_cell", {zx2, o[0], o[1], u});
        c.check(c.project({o2[0]}));
      }
    }
  }
}

// layer_norm: dx through the row mean and variance, dgamma, dbeta (layer_norm_grad); rank 1,
// 2 and 3 (B,T,D), and D = 1 (zero variance: y = beta, so dx must be 0).
TEST(GradientRules, LayerNorm) {
  for (const ops::Dims& x_dims : {ops::Dims{5}, ops::Dims{3, 4}, ops::Dims{2, 3, 5},
                                  ops::Dims{3, 1}}) {
    SCOPED_TRACE(ops::format_dims(x_dims));
    const int64_t d = x_dims.back();
    GradCheck c;
    ValueRef x = c.input("x", {F, x_dims});
    ValueRef gamma = c.input("gamma", {F, {d}}, Values::kPositive);
    ValueRef beta = c.input("beta", {F, {d}});
    std::vector<ValueRef> outs = c.op_all("layer_norm", {x, gamma, beta}, {{"epsilon", 1e-3}});
    c.check(c.project({outs[0]}));
  }
}

// The inference form with frozen statistics (constants: var must be positive).
TEST(GradientRules, BatchNormInference) {
  for (const char* act : {"none", "relu"})
  for (const NormCase& n : kNormCases) {
    SCOPED_TRACE(ops::format_dims(n.x) + " " + n.format + " activation " + act);
    const int64_t ch = n.x.size() == 4 && std::string(n.format) == "NCHW" ? n.x[1] : n.x.back();
    GradCheck c;
    ValueRef x = c.input("x", {F, n.x});
    ValueRef scale = c.input("scale", {F, {ch}});
    ValueRef bias = c.input("bias", {F, {ch}});
    std::vector<float> mean, var;
    for (int64_t i = 0; i < ch; ++i) {
      mean.push_back(0.1f * float(i) - 0.2f);
      var.push_back(0.5f + 0.3f * float(i));
    }
    auto constant = [&](const std::vector<float>& v) {
      std::vector<uint8_t> bytes(v.size() * sizeof(float));
      std::memcpy(bytes.data(), v.data(), bytes.size());
      return c.graph().add_constant("", {F, {ch}}, std::move(bytes));
    };
    ValueRef y = c.op("batch_norm", {x, scale, bias, constant(mean), constant(var)},
                      {{"data_format", n.format}, {"activation", act}});
    c.check(c.project({y}));
  }
}

// ---- elementwise with broadcasting ----------------------------------------------------------

TEST(GradientRules, BinaryElementwise) {
  const std::vector<std::vector<ops::Dims>> shapes = {
      {{2, 3}, {2, 3}},     // same shape
      {{2, 3, 4}, {3, 1}},  // b stretched along a leading axis and its own 1
      {{1, 4}, {3, 1}},     // both stretched
      {{3}, {2, 3}},        // a has fewer dims
      {{2, 3}, {}},         // b a scalar
  };
  for (const char* op : {"add", "sub", "mul"})
    for (const auto& s : shapes) check_op(op, s);
  for (const auto& s : shapes) check_op("div", s, {}, Values::kPositive);
}

TEST(GradientRules, UnaryElementwise) {
  check_op("neg", {{2, 3}});
  check_op("exp", {{2, 3}});
  check_op("log", {{2, 3}}, {}, Values::kPositive);
  check_op("sqrt", {{2, 3}}, {}, Values::kPositive);
}

// core/ops/infer_math.cc's ops, each inside its domain; the rounding family's zeros are
// checked against finite differences away from the steps.
TEST(GradientRules, UnaryMaths) {
  for (const char* op : {"sin", "cos", "tan", "atan", "sinh", "cosh", "asinh", "erf"})
    check_op(op, {{2, 3}});
  for (const char* op : {"asin", "acos", "atanh"}) check_op(op, {{2, 3}}, {}, Values::kInsideUnit);
  check_op("acosh", {{2, 3}}, {}, Values::kAboveOne);
  for (const char* op : {"ceil", "floor", "round", "sign"})
    check_op(op, {{2, 3}}, {}, Values::kOffGrid);
}

// ---- reductions and shapes ------------------------------------------------------------------

TEST(GradientRules, Reductions) {
  const std::vector<ops::AttrMap> cases = {
      {},                        // every axis
      {{"axes", ops::Ints{1}}},  // one axis, dims dropped
      {{"axes", ops::Ints{0, 2}}, {"keepdims", true}},
      {{"axes", ops::Ints{-1}}},  // counted from the end
  };
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"})
    for (const auto& a : cases) check_op(op, {{2, 3, 4}}, a);
}

TEST(GradientRules, Shapes) {
  check_op("broadcast_to", {{3, 1}}, {{"shape", ops::Ints{2, 3, 4}}});
  check_op("broadcast_to", {{4}}, {{"shape", ops::Ints{3, 4}}});
  check_op("reshape", {{2, 6}}, {{"shape", ops::Ints{3, -1}}});
  check_op("flatten", {{2, 3, 2}});
  check_op("transpose", {{2, 3, 4}}, {{"perm", ops::Ints{2, 0, 1}}});
  check_op("copy", {{2, 3}});
  check_op("cast", {{2, 3}}, {{"dtype", DLRT_F32}});
}

// ---- cut, join, frame; global pools (rules_shape_ops.cc) ----------------------------------

TEST(GradientRules, Concat) {
  check_op("concat", {{2, 3}, {2, 5}}, {{"axis", 1}});
  check_op("concat", {{1, 2, 3}, {1, 2, 1}, {1, 2, 2}}, {{"axis", -1}});
  check_op("concat", {{3, 2}, {1, 2}}, {{"axis", 0}});
  check_op("concat", {{4}}, {{"axis", 0}});
}

TEST(GradientRules, Split) {
  check_op("split", {{5, 3}}, {{"sizes", ops::Ints{2, 3}}});
  check_op("split", {{2, 7}}, {{"axis", -1}, {"sizes", ops::Ints{3, -1, 2}}});
  check_op("split", {{2, 3, 6}}, {{"axis", 2}, {"num", 3}});
  // Only part 1 reaches the loss: the other parts' gradients are zeros in dx.
  GradCheck c;
  ValueRef x = c.input("x", {F, {3, 6}});
  std::vector<ValueRef> parts = c.op_all("split", {x}, {{"axis", 1}, {"num", 3}});
  c.check(c.project({parts.at(1)}));
}

TEST(GradientRules, Slice) {
  check_op("slice", {{5, 7}}, {{"begin", ops::Ints{1, 2}}, {"end", ops::Ints{4, 7}}});
  check_op("slice", {{2, 7, 5}},
           {{"axes", ops::Ints{1, 2}},
            {"begin", ops::Ints{1, 0}},
            {"end", ops::Ints{7, 5}},
            {"strides", ops::Ints{2, 3}}});
  check_op("slice", {{6, 5}},
           {{"axes", ops::Ints{-1}},
            {"begin", ops::Ints{10}},
            {"end", ops::Ints{-10}},
            {"strides", ops::Ints{-2}}});
}

TEST(GradientRules, Pad) {
  check_op("pad", {{3, 4}}, {{"pads", ops::Ints{1, 2, 0, 1}}});
  check_op("pad", {{3, 4}}, {{"pads", ops::Ints{1, 0, 2, 1}}, {"value", 2.5}});
  check_op("pad", {{3, 4}}, {{"pads", ops::Ints{2, 1, 1, 3}}, {"mode", "reflect"}});
  check_op("pad", {{1, 3, 4, 2}},
           {{"pads", ops::Ints{0, 2, 3, 0, 0, 1, 2, 0}}, {"mode", "reflect"}});
  check_op("pad", {{5}}, {{"pads", ops::Ints{4, 4}}, {"mode", "reflect"}});
}

TEST(GradientRules, GlobalPools) {
  for (const char* op : {"global_avg_pool2d", "global_max_pool2d"}) {
    check_op(op, {{2, 3, 4, 3}});
    check_op(op, {{1, 3, 2, 5}}, {{"data_format", "NCHW"}});
    check_op(op, {{2, 2, 3, 3}}, {{"keepdims", true}});
    check_op(op, {{1, 2, 3, 4}}, {{"data_format", "NCHW"}, {"keepdims", true}});
  }
}

// Every mode at an up-sampling, a down-sampling and a non-integer ratio, both layouts. The
// loss is linear in x, so finite differences see the weights exactly (nearest's rounding
// depends on the shapes only, never on x).
TEST(GradientRules, Resize) {
  const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const char* coord : {"half_pixel", "align_corners", "asymmetric"}) {
    check_op(
        "resize", {{1, 3, 4, 2}},
        {{"size", ops::Ints{5, 7}}, {"mode", "bilinear"}, {"coordinate_transformation", coord}});
    check_op("resize", {{2, 2, 6, 5}},
             {{"size", ops::Ints{4, 3}},
              {"mode", "bilinear"},
              {"coordinate_transformation", coord},
              {"data_format", "NCHW"}});
    for (const char* nearest : kNearest) {
      check_op("resize", {{1, 4, 3, 2}},
               {{"size", ops::Ints{2, 6}},
                {"coordinate_transformation", coord},
                {"nearest_mode", nearest}});
      check_op("resize", {{1, 2, 3, 5}},
               {{"size", ops::Ints{7, 2}},
                {"coordinate_transformation", coord},
                {"nearest_mode", nearest},
                {"data_format", "NCHW"}});
    }
  }
}

// Every mode x padding_mode x align_corners, both layouts, d loss / d x and d loss / d grid.
// The grid is the input times 1.4, so points lie beyond [-1,1] too, where border stops the
// grid's gradient and reflection flips it. Random points sit far (relative to eps) from the
// kinks of bilinear (integer coordinates) and of the paddings, and nearest's rounding does
// not move under eps, so central differences see the slopes.
TEST(GradientRules, GridSample) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (bool align : {false, true})
        for (const char* format : {"NHWC", "NCHW"}) {
          SCOPED_TRACE(std::string(mode) + " " + pad + (align ? " align " : " ") + format);
          const bool nchw = std::string(format) == "NCHW";
          GradCheck c;
          // x: (2,3,4,2) NHWC / (2,2,3,4) NCHW; grid: (2,3,2,2) -> y (2,3,2,2) / (2,2,3,2)
          ValueRef x = c.input("x", {F, nchw ? ops::Dims{2, 2, 3, 4} : ops::Dims{2, 3, 4, 2}});
          ValueRef g = c.input("grid", {F, {2, 3, 2, 2}});
          const float k = 1.4f;
          std::vector<uint8_t> kb(sizeof k);
          std::memcpy(kb.data(), &k, sizeof k);
          ValueRef scale = c.graph().add_constant("", {F, {}}, std::move(kb));
          ValueRef grid = c.op("mul", {g, scale});
          c.check(c.project({c.op("grid_sample", {x, grid},
                                  {{"mode", mode},
                                   {"padding_mode", pad},
                                   {"align_corners", align},
                                   {"data_format", format}})}),
                  1e-5);
        }
}

// ---- gather and scatter_add -----------------------------------------------------------------

// dparams = scatter_add(indices, dy): repeated ids (their dy rows add up), a row no id names
// (zero gradient), rank-1 and rank-2 (B,T) ids of both index types, rows of rank 0 and 2.
TEST(GradientRules, Gather) {
  for (dlrt_dtype id_type : {DLRT_I32, DLRT_I64}) {
    GradCheck c;
    ValueRef params = c.input("params", {F, {5, 3}});
    ValueRef ids = c.index_input("ids", {id_type, {6}}, {4, 0, 4, 2, 0, 4});  // no 1, no 3
    c.check(c.project({c.op("gather", {params, ids})}));
  }
  GradCheck c;
  ValueRef params = c.input("params", {F, {4, 2, 2}});
  ValueRef ids = c.index_input("ids", {DLRT_I32, {2, 3}}, {3, 1, 3, 0, 0, 3});
  c.check(c.project({c.op("gather", {params, ids})}));
  GradCheck c1;
  ValueRef p1 = c1.input("params", {F, {3}});
  ValueRef i1 = c1.index_input("ids", {DLRT_I64, {2, 2}}, {2, 2, 0, 2});
  c1.check(c1.project({c1.op("gather", {p1, i1})}));
}

// dupdates = gather(dout, indices).
TEST(GradientRules, ScatterAdd) {
  GradCheck c;
  ValueRef updates = c.input("updates", {F, {2, 3, 4}});
  ValueRef ids = c.index_input("ids", {DLRT_I64, {2, 3}}, {1, 0, 1, 4, 1, 0});
  c.check(c.project({c.op("scatter_add", {ids, updates}, {{"num_rows", 5}})}));
}

// scatter_add is the dense one-hot product onehot(ids)^T . updates, (R,B) x (B,D): the same
// values from the graph's scatter_add and from matmul(onehot, updates, transpose_a) with
// onehot (B,R) built here.
TEST(GradientRules, ScatterAddIsTheOneHotMatmul) {
  const std::vector<int64_t> ids = {2, 0, 2, 5, 2, 1, 0};  // repeated; rows 3 and 4 unused
  const int64_t b = 7, r = 6, d = 3;
  GradCheck c;
  ValueRef updates = c.data("updates", {F, {b, d}});
  ValueRef idx = c.index_input("ids", {DLRT_I32, {b}}, ids);
  std::vector<float> onehot(size_t(b * r), 0.0f);
  for (int64_t i = 0; i < b; ++i) onehot[size_t(i * r + ids[size_t(i)])] = 1.0f;
  std::vector<uint8_t> bytes(onehot.size() * sizeof(float));
  std::memcpy(bytes.data(), onehot.data(), bytes.size());
  ValueRef oh = c.graph().add_constant("onehot", {F, {b, r}}, std::move(bytes));
  ValueRef scattered = c.op("scatter_add", {idx, updates}, {{"num_rows", r}});
  ValueRef dense = c.op("matmul", {oh, updates}, {{"transpose_a", true}});
  std::vector<double> u(size_t(b * d));
  for (size_t i = 0; i < u.size(); ++i) u[i] = 0.25 * double(i % 5) - 0.6 + 0.01 * double(i);
  HostEval ev(c.graph());
  ev.feed(updates, u);
  ev.feed_index(idx, ids);
  const std::vector<double> s = ev.eval(scattered), m = ev.eval(dense);
  ASSERT_EQ(s.size(), size_t(r * d));
  ASSERT_EQ(m.size(), s.size());
  for (size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(s[i], m[i], 1e-12) << "out[" << i << "]";
  EXPECT_EQ(s[3 * d], 0.0);  // row 3: no id
}

// ---- cumsum ---------------------------------------------------------------------------------

// dx = cumsum(dy) with reverse flipped: every combination of exclusive and reverse, along the
// first, a middle and the last (negative) axis, and a length-1 axis.
TEST(GradientRules, Cumsum) {
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true})
      for (int64_t axis : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                     (reverse ? " reverse" : ""));
        GradCheck c;
        ValueRef x = c.input("x", {F, {3, 4, 5}});
        c.check(c.project({c.op("cumsum", {x},
                                {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}})}));
      }
  GradCheck c;
  ValueRef x = c.input("x", {F, {2, 1, 3}});
  c.check(c.project({c.op("cumsum", {x}, {{"axis", 1}, {"exclusive", true}})}));
}

// ---- top_k ----------------------------------------------------------------------------------

// values' gradient = dy scattered to the chosen positions (zero elsewhere): rank 1, 2 and 3,
// k = 1, k < N and k = N, sorted and not.
TEST(GradientRules, TopK) {
  struct Case {
    ops::Dims x;
    int64_t k;
    bool sorted;
  };
  for (const Case& t : {Case{{7}, 3, true}, Case{{3, 6}, 1, true}, Case{{2, 3, 5}, 5, true},
                        Case{{4, 6}, 2, false}}) {
    SCOPED_TRACE(ops::format_dims(t.x) + " k " + std::to_string(t.k));
    GradCheck c;
    ValueRef x = c.input("x", {F, t.x});
    c.check(c.project({c.op("top_k", {x}, {{"k", t.k}, {"sorted", t.sorted}})}));
  }
}

// causal_mask: dx = causal_mask(dy) with fill 0. A finite fill keeps the projected loss
// finite (the filled entries are constants either way); square, Tq < Tk and Tq = 1.
TEST(GradientRules, CausalMask) {
  for (const ops::Dims& x : {ops::Dims{4, 4}, ops::Dims{2, 3, 5}, ops::Dims{2, 1, 1, 6}}) {
    SCOPED_TRACE(ops::format_dims(x));
    GradCheck c;
    ValueRef in = c.input("x", {F, x});
    c.check(c.project({c.op("causal_mask", {in}, {{"fill", -3.0}})}));
  }
}

// attention: dq, dk, dv through attention_grad (from the saved o and lse); causal and not,
// Tq < Tk causal, Tq = 1, Tq > Tk unmasked, D != Dv, rank 3 and 4, the scale attribute.
// Only o is projected: lse takes no gradient (the rule documents it).
TEST(GradientRules, Attention) {
  struct Case {
    ops::Dims batch;
    int64_t tq, tk, d, dv;
    int64_t causal;
    double scale;
  };
  for (const Case& t : {Case{{2}, 3, 3, 4, 4, 0, 0.0}, Case{{2}, 4, 4, 3, 3, 1, 0.0},
                        Case{{1, 2}, 2, 5, 3, 2, 1, 0.0}, Case{{3}, 1, 4, 2, 3, 1, 0.7},
                        Case{{2}, 5, 2, 3, 4, 0, 1.5}}) {
    auto dims = [&](int64_t a, int64_t b) {
      ops::Dims d = t.batch;
      d.push_back(a);
      d.push_back(b);
      return d;
    };
    SCOPED_TRACE(ops::format_dims(dims(t.tq, t.d)) + " tk " + std::to_string(t.tk) +
                 " causal " + std::to_string(t.causal));
    GradCheck c;
    ValueRef q = c.input("q", {F, dims(t.tq, t.d)});
    ValueRef k = c.input("k", {F, dims(t.tk, t.d)});
    ValueRef v = c.input("v", {F, dims(t.tk, t.dv)});
    c.check(c.project(
        {c.op("attention", {q, k, v}, {{"causal", t.causal}, {"scale", t.scale}})}));
  }
}

}  // namespace
}  // namespace dlrt::core::testing
