// Shape inference of the reductions and the shape ops.
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferReduceShape, ReduceAllByDefault) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"})
    EXPECT_EQ(out_dims(op, {f32({2, 3, 4})}), Dims{}) << op;
  EXPECT_EQ(out_dims("reduce_sum", {f32({2, 3, 4})}, {{"keepdims", true}}), (Dims{1, 1, 1}));
}

TEST(InferReduceShape, NegativeAxesAndKeepdims) {
  EXPECT_EQ(out_dims("reduce_sum", {f32({2, 3, 4})}, {{"axes", {-1, 0}}}), (Dims{3}));
  EXPECT_EQ(out_dims("reduce_mean", {f32({2, 3, 4})}, {{"axes", {-1, 0}}, {"keepdims", true}}),
            (Dims{1, 3, 1}));
  EXPECT_EQ(out_dims("reduce_max", {f32({2, 3, 4})}, {{"axes", {1}}}), (Dims{2, 4}));
}

TEST(InferReduceShape, ReduceErrors) {
  EXPECT_TRUE(invalid("reduce_sum", {f32({2, 3, 4})}, {{"axes", {3}}},
                      {"reduce_sum: attribute 'axes' (3) has axis 3, out of range for input 0 (x) "
                       "of rank 3 (expected -3..2)"}));
  EXPECT_TRUE(invalid("reduce_sum", {f32({2, 3, 4})}, {{"axes", {1, -2}}},
                      {"reduce_sum: attribute 'axes' (1,-2) names axis 1 twice"}));
  EXPECT_TRUE(invalid("reduce_sum", {f32({2, 3})}, {{"keepdims", 1}},
                      {"reduce_sum: attribute 'keepdims' must be bool, got int 1"}));
}

TEST(InferReduceShape, ReduceMaxGrad) {
  EXPECT_EQ(out_dims("reduce_max_grad", {f32({2, 3}), f32({2}), f32({2})}, {{"axes", {1}}}),
            (Dims{2, 3}));
  EXPECT_TRUE(invalid("reduce_max_grad", {f32({2, 3}), f32({2}), f32({3})}, {{"axes", {1}}},
                      {"reduce_max_grad: input 2 (dy) has dims (3), expected (2)"}));
}

TEST(InferReduceShape, BroadcastTo) {
  EXPECT_EQ(out_dims("broadcast_to", {f32({3, 1})}, {{"shape", {2, 3, 4}}}), (Dims{2, 3, 4}));
  EXPECT_TRUE(
      invalid("broadcast_to", {f32({3, 4})}, {{"shape", {4}}},
              {"broadcast_to: input 0 (x) (3,4) does not broadcast to attribute 'shape' (4)"}));
}

TEST(InferReduceShape, ReshapeWithMinusOne) {
  EXPECT_EQ(out_dims("reshape", {f32({4, 6})}, {{"shape", {2, -1}}}), (Dims{2, 12}));
  EXPECT_EQ(out_dims("reshape", {f32({4, 6})}, {{"shape", {24}}}), (Dims{24}));
  EXPECT_EQ(out_dims("reshape", {{DLRT_U8, {1}}}, {{"shape", Ints{}}}), Dims{});  // to scalar
}

TEST(InferReduceShape, ReshapeErrors) {
  EXPECT_TRUE(invalid("reshape", {f32({4, 6})}, {{"shape", {2, -1, -1}}},
                      {"reshape: attribute 'shape' (2,-1,-1) has more than one -1"}));
  EXPECT_TRUE(
      invalid("reshape", {f32({4, 2})}, {{"shape", {2, 3}}},
              {"reshape: attribute 'shape' (2,3) has 6 elements, input 0 (x) (4,2) has 8"}));
  EXPECT_TRUE(invalid("reshape", {f32({4, 2})}, {{"shape", {3, -1}}},
                      {"reshape: attribute 'shape' (3,-1) cannot hold the 8 elements"}));
  EXPECT_TRUE(invalid("reshape", {f32({4, 2})}, {{"shape", {8, 0}}},
                      {"reshape: attribute 'shape' (8,0) has 0 at index 1, expected >= 1 or -1"}));
  EXPECT_TRUE(
      invalid("reshape", {f32({4, 2})}, {}, {"reshape: missing required attribute 'shape'"}));
}

TEST(InferReduceShape, Flatten) {
  EXPECT_EQ(out_dims("flatten", {f32({64, 3, 3, 64})}), (Dims{64, 576}));
  EXPECT_EQ(out_dims("flatten", {f32({5})}), (Dims{5, 1}));
  EXPECT_TRUE(
      invalid("flatten", {f32({})}, {}, {"flatten: input 0 (x) must have rank >= 1, got rank 0"}));
}

TEST(InferReduceShape, Transpose) {
  EXPECT_EQ(out_dims("transpose", {f32({2, 3, 4})}, {{"perm", {2, 0, 1}}}), (Dims{4, 2, 3}));
  EXPECT_TRUE(invalid("transpose", {f32({2, 3, 4})}, {{"perm", {0, 1}}},
                      {"transpose: attribute 'perm' (0,1) has 2 values, expected 3"}));
  EXPECT_TRUE(
      invalid("transpose", {f32({2, 3, 4})}, {{"perm", {0, 1, 1}}},
              {"transpose: attribute 'perm' (0,1,1) is not a permutation of 0..2: 1 at index 2"}));
}

}  // namespace
}  // namespace dlrt::ops
