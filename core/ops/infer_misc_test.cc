// Shape inference of matmul, softmax, the loss, argmax/equal_count, the generators,
// dropout, cast, gather_rows and copy.
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::i32;
using testing::i64;
using testing::invalid;
using testing::out_dims;

TEST(InferMisc, MatmulTransposeFlags) {
  EXPECT_EQ(out_dims("matmul", {f32({3, 5}), f32({5, 2})}), (Dims{3, 2}));
  EXPECT_EQ(out_dims("matmul", {f32({5, 3}), f32({5, 2})}, {{"transpose_a", true}}), (Dims{3, 2}));
  EXPECT_EQ(out_dims("matmul", {f32({3, 5}), f32({2, 5})}, {{"transpose_b", true}}), (Dims{3, 2}));
  EXPECT_EQ(out_dims("matmul", {f32({5, 3}), f32({2, 5})},
                     {{"transpose_a", true}, {"transpose_b", true}}),
            (Dims{3, 2}));
}

TEST(InferMisc, MatmulErrors) {
  EXPECT_TRUE(invalid("matmul", {f32({3, 5}), f32({4, 2})}, {},
                      {"matmul: inner dimensions differ: a is (3,5) and b is (4,2) "
                       "(transpose_a=false, transpose_b=false)"}));
  EXPECT_TRUE(invalid("matmul", {f32({3, 5}), f32({2, 5})}, {{"transpose_a", true}},
                      {"(transpose_a=true, transpose_b=false)"}));
  EXPECT_TRUE(invalid("matmul", {f32({2, 3, 5}), f32({5, 2})}, {},
                      {"matmul: input 0 (a) must have rank 2 (M,K), got rank 3"}));
}

TEST(InferMisc, MatmulBiasAct) {
  EXPECT_EQ(out_dims("matmul_bias_act", {f32({64, 576}), f32({576, 64}), f32({64})},
                     {{"activation", "relu"}}),
            (Dims{64, 64}));
  EXPECT_TRUE(invalid("matmul_bias_act", {f32({64, 576}), f32({576, 64}), f32({10})}, {},
                      {"matmul_bias_act: input 2 (bias) has 10 elements, expected 64"}));
}

TEST(InferMisc, Softmax) {
  EXPECT_EQ(out_dims("softmax", {f32({64, 10})}), (Dims{64, 10}));
  EXPECT_EQ(out_dims("log_softmax", {f32({2, 3, 4})}, {{"axis", 1}}), (Dims{2, 3, 4}));
  EXPECT_TRUE(invalid("softmax", {f32({64, 10})}, {{"axis", 2}},
                      {"softmax: attribute 'axis' is 2, out of range for input 0 (x) of rank 2 "
                       "(expected -2..1)"}));
}

TEST(InferMisc, SparseSoftmaxCrossEntropyHasTwoOutputs) {
  for (const TensorType& labels : {i32({64}), i64({64})}) {
    Result<OpInstance> r = instantiate("sparse_softmax_cross_entropy", {f32({64, 10}), labels}, {});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->outputs().size(), 2u);
    EXPECT_EQ(r->output(0), f32({64}));      // loss
    EXPECT_EQ(r->output(1), f32({64, 10}));  // backprop
  }
  EXPECT_TRUE(invalid("sparse_softmax_cross_entropy", {f32({64, 10}), i32({32})}, {},
                      {"sparse_softmax_cross_entropy: input 1 (labels) has 32 labels in dim 0, "
                       "expected 64"}));
  EXPECT_TRUE(invalid("sparse_softmax_cross_entropy", {f32({64, 10}), f32({64})}, {},
                      {"input 1 (labels) has dtype f32, expected i32|i64"}));
}

TEST(InferMisc, Argmax) {
  Result<OpInstance> r = instantiate("argmax", {f32({64, 10})}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output(0), i32({64}));
  EXPECT_EQ(out_dims("argmax", {f32({2, 3, 4})}, {{"axis", 0}}), (Dims{3, 4}));
  Result<OpInstance> r64 = instantiate("argmax", {f32({5})}, {{"output_type", DLRT_I64}});
  ASSERT_TRUE(r64.ok());
  EXPECT_EQ(r64->output(0), i64({}));
  EXPECT_TRUE(invalid("argmax", {f32({5})}, {{"output_type", DLRT_F32}},
                      {"argmax: attribute 'output_type' is f32, expected i32|i64"}));
}

TEST(InferMisc, EqualCount) {
  EXPECT_EQ(instantiate("equal_count", {i32({64}), i64({64})}, {})->output(0), f32({}));
  EXPECT_TRUE(invalid("equal_count", {i32({64}), i32({63})}, {},
                      {"equal_count: input 1 (b) has dims (63), expected (64)"}));
}

TEST(InferMisc, Generators) {
  Result<OpInstance> fill = instantiate("fill", {}, {{"shape", {3, 3, 1, 32}}, {"value", 1}});
  ASSERT_TRUE(fill.ok()) << fill.status().to_string();
  EXPECT_EQ(fill->output(0), f32({3, 3, 1, 32}));
  EXPECT_EQ(fill->attrs().at("value").as_float(), 1.0);
  EXPECT_EQ(instantiate("fill", {}, {{"shape", Ints{}}, {"dtype", DLRT_I64}})->output(0), i64({}));
  EXPECT_EQ(out_dims("random_uniform", {}, {{"shape", {576, 64}}, {"seed", 42}}), (Dims{576, 64}));
  EXPECT_EQ(out_dims("random_normal", {}, {{"shape", {10}}, {"stddev", 0.05}}), (Dims{10}));
  EXPECT_TRUE(invalid("random_uniform", {}, {{"shape", {2}}, {"minval", 1.0}, {"maxval", 1.0}},
                      {"random_uniform: attribute 'minval' (1) must be less than 'maxval' (1)"}));
  EXPECT_TRUE(invalid("random_normal", {}, {{"shape", {2}}, {"dtype", DLRT_I32}},
                      {"random_normal: attribute 'dtype' is i32"}));
  EXPECT_TRUE(invalid("fill", {}, {}, {"fill: missing required attribute 'shape' (ints)"}));
}

TEST(InferMisc, Dropout) {
  Result<OpInstance> r = instantiate("dropout", {f32({64, 128})}, {{"rate", 0.5}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0), f32({64, 128}));
  EXPECT_EQ(r->output(1), f32({64, 128}));  // mask
  EXPECT_TRUE(invalid("dropout", {f32({4})}, {{"rate", 1.0}},
                      {"dropout: attribute 'rate' is 1, expected a value in [0, 1)"}));
  EXPECT_TRUE(
      invalid("dropout", {f32({4})}, {}, {"dropout: missing required attribute 'rate' (float)"}));
}

TEST(InferMisc, CastGatherCopy) {
  EXPECT_EQ(instantiate("cast", {{DLRT_U8, {64, 28, 28, 1}}}, {{"dtype", DLRT_F32}})->output(0),
            f32({64, 28, 28, 1}));
  EXPECT_TRUE(
      invalid("cast", {f32({2})}, {}, {"cast: missing required attribute 'dtype' (dtype)"}));
  Result<OpInstance> g = instantiate("gather_rows", {{DLRT_U8, {60000, 28, 28, 1}}, i64({64})}, {});
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->output(0), (TensorType{DLRT_U8, {64, 28, 28, 1}}));
  EXPECT_TRUE(invalid("gather_rows", {f32({10, 3}), i32({2, 2})}, {},
                      {"gather_rows: input 1 (indices) must have rank 1 (B), got rank 2"}));
  EXPECT_EQ(instantiate("copy", {i64({7})}, {})->output(0), i64({7}));
}

}  // namespace
}  // namespace dlrt::ops
