// Shape inference of gather and scatter_add: ids of rank 0, 1 and 2, rows of rank 0 and 2,
// any params dtype, and the messages of bad calls.
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

TEST(InferGather, OutputIsIdsDimsThenRowDims) {
  EXPECT_EQ(out_dims("gather", {f32({10, 4}), i32({32, 7})}), (Dims{32, 7, 4}));
  EXPECT_EQ(out_dims("gather", {f32({10, 2, 3}), i64({5})}), (Dims{5, 2, 3}));
  EXPECT_EQ(out_dims("gather", {f32({10, 4}), i64({})}), (Dims{4}));  // a scalar id
  EXPECT_EQ(out_dims("gather", {f32({10}), i32({2, 3})}), (Dims{2, 3}));
  Result<OpInstance> u8 = instantiate("gather", {{DLRT_U8, {256, 28}}, i32({4})}, {});
  ASSERT_TRUE(u8.ok()) << u8.status().to_string();
  EXPECT_EQ(u8->output(0).dtype, DLRT_U8);
  EXPECT_FALSE(find_op("gather")->inputs[1].differentiable);
  EXPECT_TRUE(find_op("gather")->no_gradient.empty());
}

TEST(InferGather, ScatterAddGivesNumRowsThenRowDims) {
  EXPECT_EQ(out_dims("scatter_add", {i32({32, 7}), f32({32, 7, 4})}, {{"num_rows", 10}}),
            (Dims{10, 4}));
  EXPECT_EQ(out_dims("scatter_add", {i64({5}), f32({5})}, {{"num_rows", 3}}), (Dims{3}));
  EXPECT_EQ(out_dims("scatter_add", {i64({}), f32({2, 3})}, {{"num_rows", 3}}), (Dims{3, 2, 3}));
  EXPECT_FALSE(find_op("scatter_add")->inputs[0].differentiable);
}

TEST(InferGather, Errors) {
  EXPECT_TRUE(invalid("gather", {f32({}), i32({3})}, {}, {"gather", "rank"}));
  EXPECT_TRUE(invalid("gather", {f32({10, 4}), f32({3})}, {}, {"gather", "indices"}));
  EXPECT_TRUE(invalid("gather", {f32({10, 1, 1, 1, 1}), i32({2, 2, 2, 2, 2})}, {},
                      {"gather: y would have rank 9"}));
  EXPECT_TRUE(invalid("scatter_add", {i32({4, 5}), f32({4, 6, 3})}, {{"num_rows", 10}},
                      {"scatter_add: input 1 (updates) has dims (4,6,3), expected them to start "
                       "with indices' dims (4,5)"}));
  EXPECT_TRUE(invalid("scatter_add", {i32({4}), f32({4, 3})}, {}, {"scatter_add", "num_rows"}));
  EXPECT_TRUE(invalid("scatter_add", {i32({4}), f32({4, 3})}, {{"num_rows", 0}},
                      {"scatter_add", "num_rows"}));
}

}  // namespace
}  // namespace dlrt::ops
