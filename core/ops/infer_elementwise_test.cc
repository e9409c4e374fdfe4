// Shape inference of the elementwise ops, bias_add and the activation gradients.
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferElementwise, UnaryKeepsTheType) {
  for (const char* op : {"relu", "sigmoid", "tanh", "neg", "exp", "log", "sqrt"}) {
    Result<OpInstance> r = instantiate(op, {{DLRT_F16, {2, 3}}}, {});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
    EXPECT_EQ(r->output(0), (TensorType{DLRT_F16, {2, 3}})) << op;
  }
  EXPECT_EQ(out_dims("relu", {f32({})}), Dims{});  // scalars are fine
}

TEST(InferElementwise, BinaryBroadcasts) {
  for (const char* op : {"add", "sub", "mul", "div"})
    EXPECT_EQ(out_dims(op, {f32({3, 1, 5}), f32({4, 5})}), (Dims{3, 4, 5})) << op;
  EXPECT_EQ(out_dims("mul", {f32({}), f32({2, 2})}), (Dims{2, 2}));
}

TEST(InferElementwise, BroadcastConflict) {
  EXPECT_TRUE(
      invalid("add", {f32({3, 4}), f32({2, 4})}, {},
              {"add: cannot broadcast a (3,4) with b (2,4): a dim 0 is 3 and b dim 0 is 2"}));
}

TEST(InferElementwise, BiasAdd) {
  EXPECT_EQ(out_dims("bias_add", {f32({64, 10}), f32({10})}), (Dims{64, 10}));
  EXPECT_EQ(out_dims("bias_add", {f32({2, 5, 5, 8}), f32({8})}), (Dims{2, 5, 5, 8}));
  EXPECT_EQ(out_dims("bias_add", {f32({2, 8, 5, 5}), f32({8})}, {{"data_format", "NCHW"}}),
            (Dims{2, 8, 5, 5}));
  EXPECT_TRUE(
      invalid("bias_add", {f32({64, 10}), f32({9})}, {},
              {"bias_add: input 1 (b) has 9 elements, expected 10 to match input 0 (x) dim 1"}));
  EXPECT_TRUE(invalid("bias_add", {f32({64, 10}), f32({1, 10})}, {},
                      {"bias_add: input 1 (b) must have rank 1 (C), got rank 2"}));
}

TEST(InferElementwise, BiasAddGrad) {
  EXPECT_EQ(out_dims("bias_add_grad", {f32({2, 5, 5, 8})}), (Dims{8}));
  EXPECT_EQ(out_dims("bias_add_grad", {f32({2, 8, 5, 5})}, {{"data_format", "NCHW"}}), (Dims{8}));
  EXPECT_TRUE(invalid("bias_add_grad", {f32({8})}, {{"data_format", "NCHW"}},
                      {"bias_add_grad: input 0 (dy) must have rank >= 2, got rank 1"}));
}

TEST(InferElementwise, ActivationGrads) {
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"})
    EXPECT_EQ(out_dims(op, {f32({4, 3}), f32({4, 3})}), (Dims{4, 3})) << op;
  EXPECT_TRUE(
      invalid("relu_grad", {f32({4, 3}), f32({3, 4})}, {},
              {"relu_grad: input 1 (x) has dims (3,4), expected (4,3) to match input 0 (dy)"}));
}

TEST(InferElementwise, ActivationsKeepTheType) {
  for (const char* op :
       {"elu", "gelu", "silu", "hard_swish", "softplus", "clip", "abs", "square", "rsqrt"}) {
    Result<OpInstance> r = instantiate(op, {{DLRT_F16, {2, 3}}}, {});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
    EXPECT_EQ(r->output(0), (TensorType{DLRT_F16, {2, 3}})) << op;
  }
  EXPECT_EQ(out_dims("gelu_grad", {f32({4}), f32({4})}, {{"approximate", "tanh"}}), Dims{4});
  EXPECT_TRUE(invalid("gelu", {f32({4})}, {{"approximate", "fast"}}, {"approximate"}));
  EXPECT_TRUE(invalid("elu_grad", {f32({4}), f32({5})}, {}, {"elu_grad"}));
}

TEST(InferElementwise, MaximumMinimumPowBroadcast) {
  for (const char* op : {"maximum", "minimum", "pow"})
    EXPECT_EQ(out_dims(op, {f32({3, 1, 5}), f32({4, 5})}), (Dims{3, 4, 5})) << op;
}

// Comparisons: add's broadcasting, a bool output; a and b of one float dtype.
TEST(InferElementwise, ComparisonsGiveBool) {
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    Result<OpInstance> r = instantiate(op, {f32({3, 1}), f32({4})}, {});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
    EXPECT_EQ(r->output(0), (TensorType{DLRT_BOOL, {3, 4}})) << op;
  }
  EXPECT_TRUE(
      invalid("less", {f32({3}), f32({4})}, {}, {"less: cannot broadcast a (3) with b (4)"}));
  EXPECT_FALSE(instantiate("equal", {f32({3}), {DLRT_F16, {3}}}, {}).ok());
}

TEST(InferElementwise, WhereBroadcastsThree) {
  const TensorType cond{DLRT_BOOL, {3, 1, 1}};
  EXPECT_EQ(out_dims("where", {cond, f32({1, 4, 1}), f32({5})}), (Dims{3, 4, 5}));
  Result<OpInstance> r = instantiate("where", {cond, {DLRT_F16, {4, 1}}, {DLRT_F16, {}}}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0), (TensorType{DLRT_F16, {3, 4, 1}}));
  EXPECT_TRUE(invalid("where", {cond, f32({4, 2}), f32({3})}, {},
                      {"where: cannot broadcast input 2 (y) (3) with the shape (3,4,2)"}));
  EXPECT_FALSE(instantiate("where", {f32({3}), f32({3}), f32({3})}, {}).ok());  // cond not bool
}

}  // namespace
}  // namespace dlrt::ops
