// Shape inference of the sequence ops (infer_seq.cc) and the messages of bad calls.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::i32;
using testing::i64;
using testing::invalid;
using testing::out_dims;

TEST(InferSeq, OneHotAppendsDepth) {
  EXPECT_EQ(out_dims("one_hot", {i32({32, 7})}, {{"depth", 10}}), (Dims{32, 7, 10}));
  EXPECT_EQ(out_dims("one_hot", {i64({})}, {{"depth", 3}}), (Dims{3}));
  Result<OpInstance> r = instantiate("one_hot", {i64({4})}, {{"depth", 5}, {"dtype", DLRT_I64}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0).dtype, DLRT_I64);
  Result<OpInstance> d = instantiate("one_hot", {i64({4})}, {{"depth", 5}});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->output(0).dtype, DLRT_F32);  // the default
  EXPECT_FALSE(find_op("one_hot")->inputs[0].differentiable);
  EXPECT_FALSE(find_op("one_hot")->no_gradient.empty());
}

TEST(InferSeq, OneHotErrors) {
  EXPECT_TRUE(invalid("one_hot", {i32({3})}, {}, {"one_hot", "depth"}));
  EXPECT_TRUE(invalid("one_hot", {i32({3})}, {{"depth", 0}}, {"one_hot", "depth"}));
  EXPECT_TRUE(invalid("one_hot", {f32({3})}, {{"depth", 2}}, {"one_hot", "indices"}));
  EXPECT_TRUE(invalid("one_hot", {i32({3})}, {{"depth", 2}, {"dtype", DLRT_BOOL}},
                      {"one_hot", "dtype"}));
  EXPECT_TRUE(invalid("one_hot", {i32({2, 2, 2, 2, 2, 2, 2, 2})}, {{"depth", 2}},
                      {"one_hot: y would have rank 9"}));
}

TEST(InferSeq, CumsumKeepsXsType) {
  EXPECT_EQ(out_dims("cumsum", {f32({3, 5, 7})}), (Dims{3, 5, 7}));
  EXPECT_EQ(out_dims("cumsum", {f32({3, 5, 7})}, {{"axis", -1}, {"reverse", true}}),
            (Dims{3, 5, 7}));
  EXPECT_TRUE(find_op("cumsum")->no_gradient.empty());
  EXPECT_TRUE(invalid("cumsum", {f32({3, 5})}, {{"axis", 2}},
                      {"cumsum: attribute 'axis' is 2, out of range for input 0 (x) of rank 2 "
                       "(expected -2..1)"}));
  EXPECT_TRUE(invalid("cumsum", {f32({})}, {}, {"cumsum", "rank"}));
  // Integers are numbers too (kNumericTypes); bool is not.
  EXPECT_EQ(out_dims("cumsum", {i32({3})}), (Dims{3}));
  EXPECT_TRUE(invalid("cumsum", {TensorType{DLRT_BOOL, {3}}}, {}, {"cumsum", "x"}));
}

TEST(InferSeq, TopKGivesValuesAndI64Indices) {
  Result<OpInstance> r = instantiate("top_k", {f32({3, 5, 7})}, {{"k", 2}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0), (TensorType{DLRT_F32, {3, 5, 2}}));
  EXPECT_EQ(r->output(1), (TensorType{DLRT_I64, {3, 5, 2}}));
  EXPECT_EQ(out_dims("top_k", {f32({4})}, {{"k", 4}, {"sorted", false}}), (Dims{4}));
  EXPECT_TRUE(find_op("top_k")->no_gradient.empty());
  EXPECT_TRUE(invalid("top_k", {f32({3, 5})}, {{"k", 6}},
                      {"top_k: attribute 'k' is 6, more than the 5 elements of input 0 (x)'s "
                       "last axis"}));
  EXPECT_TRUE(invalid("top_k", {f32({3, 5})}, {}, {"top_k", "k"}));
  EXPECT_TRUE(invalid("top_k", {f32({3, 5})}, {{"k", 0}}, {"top_k", "k"}));
  EXPECT_TRUE(invalid("top_k", {f32({})}, {{"k", 1}}, {"top_k", "rank"}));
}

}  // namespace
}  // namespace dlrt::ops
