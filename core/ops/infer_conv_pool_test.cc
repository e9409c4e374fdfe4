// Shape inference of conv2d, pools and their backward ops.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferConvPool, Conv2dValid) {
  // The reference workload's first layer: 28x28x1 -> 26x26x32.
  EXPECT_EQ(out_dims("conv2d", {f32({64, 28, 28, 1}), f32({3, 3, 1, 32})}), (Dims{64, 26, 26, 32}));
}

TEST(InferConvPool, Conv2dSameStride2OddSizes) {
  // ceil(7/2) = 4, ceil(5/2) = 3
  EXPECT_EQ(out_dims("conv2d", {f32({1, 7, 5, 3}), f32({3, 3, 3, 8})},
                     {{"padding", "SAME"}, {"strides", {2, 2}}}),
            (Dims{1, 4, 3, 8}));
}

TEST(InferConvPool, Conv2dDilationsAndNchw) {
  // dilated 3x3 with dilation 2 spans 5: 9 - 5 + 1 = 5
  EXPECT_EQ(out_dims("conv2d", {f32({1, 9, 9, 2}), f32({3, 3, 2, 4})}, {{"dilations", {2, 2}}}),
            (Dims{1, 5, 5, 4}));
  // NCHW: x (N,C,H,W), y (N,Co,OH,OW); w stays HWIO.
  EXPECT_EQ(out_dims("conv2d", {f32({2, 3, 10, 8}), f32({3, 3, 3, 16})}, {{"data_format", "NCHW"}}),
            (Dims{2, 16, 8, 6}));
}

TEST(InferConvPool, Conv2dErrors) {
  EXPECT_TRUE(invalid("conv2d", {f32({1, 8, 8, 4}), f32({3, 3, 3, 8})}, {},
                      {"conv2d: input 1 (w) has 3 channels in dim 2 (Ci), expected 4 to match "
                       "input 0 (x) dim 3"}));
  EXPECT_TRUE(invalid("conv2d", {f32({8, 8, 4}), f32({3, 3, 4, 8})}, {},
                      {"conv2d: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 8, 8, 4}), f32({3, 4, 8})}, {},
                      {"conv2d: input 1 (w) must have rank 4 (KH,KW,Ci/groups,Co), got rank 3"}));
  EXPECT_TRUE(invalid(
      "conv2d", {f32({1, 2, 8, 4}), f32({3, 3, 4, 8})}, {},
      {"conv2d: VALID output height would be 0 (input 2, kernel 3, dilation 1, stride 1)"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 8, 8, 4}), f32({3, 3, 4, 8})}, {{"stride", {2, 2}}},
                      {"conv2d: unknown attribute 'stride' (accepted: data_format, dilations, "
                       "groups, padding, pads, strides)"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 8, 8, 4}), f32({3, 3, 4, 8})}, {{"padding", "FULL"}},
                      {"conv2d: attribute 'padding' is \"FULL\""}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 8, 8, 4}), f32({3, 3, 4, 8})}, {{"strides", {0, 1}}},
                      {"conv2d: attribute 'strides' (0,1) has 0 at index 0, expected >= 1"}));
}

// groups: w is (KH,KW,Ci/groups,Co) as TF's grouped conv2d; Ci and Co must be multiples of
// groups. Depthwise is groups = Ci with Co = Ci * multiplier.
TEST(InferConvPool, Conv2dGroups) {
  EXPECT_EQ(out_dims("conv2d", {f32({1, 6, 6, 4}), f32({3, 3, 2, 6})}, {{"groups", 2}}),
            (Dims{1, 4, 4, 6}));
  // Depthwise, multiplier 2, NCHW, SAME stride 2.
  EXPECT_EQ(
      out_dims("conv2d", {f32({2, 3, 7, 7}), f32({3, 3, 1, 6})},
               {{"groups", 3}, {"data_format", "NCHW"}, {"padding", "SAME"}, {"strides", {2, 2}}}),
      (Dims{2, 6, 4, 4}));
  EXPECT_EQ(out_dims("conv2d_bias_act", {f32({1, 5, 5, 4}), f32({3, 3, 1, 4}), f32({4})},
                     {{"groups", 4}, {"activation", "relu"}}),
            (Dims{1, 3, 3, 4}));
  EXPECT_EQ(out_dims("conv2d_backward_data", {f32({1, 4, 4, 6}), f32({3, 3, 2, 6})},
                     {{"groups", 2}, {"input_shape", {1, 6, 6, 4}}}),
            (Dims{1, 6, 6, 4}));
  EXPECT_EQ(out_dims("conv2d_backward_filter", {f32({1, 6, 6, 4}), f32({1, 4, 4, 6})},
                     {{"groups", 2}, {"filter_shape", {3, 3, 2, 6}}}),
            (Dims{3, 3, 2, 6}));

  EXPECT_TRUE(invalid("conv2d", {f32({1, 6, 6, 4}), f32({3, 3, 2, 6})}, {{"groups", 0}},
                      {"conv2d: attribute 'groups' is 0, expected >= 1"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 6, 6, 4}), f32({3, 3, 1, 6})}, {{"groups", 3}},
                      {"conv2d: attribute 'groups' is 3, which does not divide the 4 channels of "
                       "input 0 (x) dim 3"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 6, 6, 4}), f32({3, 3, 2, 5})}, {{"groups", 2}},
                      {"conv2d: attribute 'groups' is 2, which does not divide the 5 output "
                       "channels of input 1 (w) dim 3 (Co)"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 6, 6, 4}), f32({3, 3, 4, 6})}, {{"groups", 2}},
                      {"conv2d: input 1 (w) has 4 channels in dim 2 (Ci/groups), expected 2 = 4 "
                       "channels of input 0 (x) dim 3 / groups 2"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 4, 6, 6}), f32({3, 3, 1, 4})},
                      {{"groups", 2}, {"data_format", "NCHW"}},
                      {"conv2d: input 1 (w) has 1 channels in dim 2 (Ci/groups), expected 2 = 4 "
                       "channels of input 0 (x) dim 1 / groups 2"}));
  EXPECT_TRUE(invalid("conv2d_backward_filter", {f32({1, 6, 6, 4}), f32({1, 4, 4, 6})},
                      {{"groups", 2}, {"filter_shape", {3, 3, 4, 6}}},
                      {"attribute 'filter_shape' (3,3,4,6) has 4 channels in dim 2 (Ci/groups), "
                       "expected 2"}));
  EXPECT_TRUE(invalid("conv2d_backward_data", {f32({1, 4, 4, 6}), f32({3, 3, 2, 6})},
                      {{"groups", 4}, {"input_shape", {1, 6, 6, 8}}},
                      {"attribute 'groups' is 4, which does not divide the 6 output channels"}));
}

// The core spells the padding out in "pads" (h_before, w_before, h_after, w_after) for every
// padding mode, so plugins never re-derive SAME; a normalised instance instantiates again
// unchanged; explicit pads need padding EXPLICIT.
TEST(InferConvPool, PaddingIsNormalisedToExplicitPads) {
  auto pads_of = [](const char* op, std::vector<TensorType> in, AttrMap attrs) {
    Result<OpInstance> r = instantiate(op, in, attrs);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? r->attrs().at("pads").as_ints() : Ints{};
  };
  // SAME, 7x8 input, 2x2 kernel, stride 2: out 4x4; h total 1 (0 before, 1 after), w total 0.
  EXPECT_EQ(pads_of("conv2d", {f32({1, 7, 8, 3}), f32({2, 2, 3, 4})},
                    {{"padding", "SAME"}, {"strides", {2, 2}}}),
            (Ints{0, 0, 1, 0}));
  // SAME, 5x5, 3x3, stride 1: one cell on every side.
  EXPECT_EQ(pads_of("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})}, {{"padding", "SAME"}}),
            (Ints{1, 1, 1, 1}));
  EXPECT_EQ(pads_of("max_pool2d", {f32({1, 5, 5, 3})}, {{"padding", "SAME"}}), (Ints{0, 0, 1, 1}));
  EXPECT_EQ(pads_of("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})}, {}), (Ints{0, 0, 0, 0}));
  // Already normalised: the same pads again are accepted (gradient rules copy attributes).
  EXPECT_EQ(pads_of("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})},
                    {{"padding", "SAME"}, {"pads", {1, 1, 1, 1}}}),
            (Ints{1, 1, 1, 1}));
  // EXPLICIT: asymmetric pads as given; output (5+2+0-3)/1+1 = 5 high, (5+1+3-3)+1 = 7 wide.
  EXPECT_EQ(out_dims("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})},
                     {{"padding", "EXPLICIT"}, {"pads", {2, 1, 0, 3}}}),
            (Dims{1, 5, 7, 4}));
  EXPECT_TRUE(
      invalid("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})},
              {{"padding", "SAME"}, {"pads", {2, 1, 0, 3}}},
              {"conv2d: attribute 'pads' is (2,1,0,3), but padding \"SAME\" gives (1,1,1,1)"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 5, 5, 3}), f32({3, 3, 3, 4})},
                      {{"padding", "EXPLICIT"}, {"pads", {0, 0, -1, 0}}},
                      {"conv2d: attribute 'pads' (0,0,-1,0) has -1 at index 2, expected >= 0"}));
  EXPECT_TRUE(invalid(
      "max_pool2d", {f32({1, 5, 5, 3})}, {{"padding", "EXPLICIT"}, {"pads", {2, 0, 0, 0}}},
      {"max_pool2d: attribute 'pads' is (2,0,0,0): pad 0 must be smaller than the window (2)"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, 1, 5, 3}), f32({3, 3, 3, 4})},
                      {{"padding", "EXPLICIT"}, {"pads", {1, 0, 0, 0}}},
                      {"conv2d: EXPLICIT output height would be 0 (input 1, kernel 3, dilation 1, "
                       "stride 1, pads (1,0))"}));
}

TEST(InferConvPool, Conv2dBiasAct) {
  EXPECT_EQ(out_dims("conv2d_bias_act", {f32({1, 5, 5, 2}), f32({3, 3, 2, 6}), f32({6})},
                     {{"activation", "relu"}}),
            (Dims{1, 3, 3, 6}));
  EXPECT_TRUE(invalid("conv2d_bias_act", {f32({1, 5, 5, 2}), f32({3, 3, 2, 6}), f32({5})}, {},
                      {"conv2d_bias_act: input 2 (b) has 5 elements, expected 6"}));
  EXPECT_TRUE(invalid("conv2d_bias_act", {f32({1, 5, 5, 2}), f32({3, 3, 2, 6}), f32({6})},
                      {{"activation", "gelu"}}, {"'activation' is \"gelu\""}));
}

TEST(InferConvPool, MaxPoolValidAndSame) {
  EXPECT_EQ(out_dims("max_pool2d", {f32({64, 26, 26, 32})}), (Dims{64, 13, 13, 32}));
  EXPECT_EQ(out_dims("max_pool2d", {f32({64, 11, 11, 64})}), (Dims{64, 5, 5, 64}));
  EXPECT_EQ(out_dims("max_pool2d", {f32({1, 11, 11, 2})}, {{"padding", "SAME"}}),
            (Dims{1, 6, 6, 2}));
  EXPECT_EQ(out_dims("avg_pool2d", {f32({1, 9, 9, 1})}, {{"ksize", {3, 3}}, {"strides", {1, 1}}}),
            (Dims{1, 7, 7, 1}));
  EXPECT_EQ(out_dims("avg_pool2d", {f32({1, 4, 9, 9})}, {{"data_format", "NCHW"}}),
            (Dims{1, 4, 4, 4}));
}

TEST(InferConvPool, PoolErrors) {
  EXPECT_TRUE(invalid("max_pool2d", {f32({1, 1, 4, 3})}, {},
                      {"max_pool2d: VALID output height would be 0 (input 1, ksize 2, stride 2)"}));
  EXPECT_TRUE(invalid("avg_pool2d", {f32({1, 4, 4})}, {},
                      {"avg_pool2d: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  EXPECT_TRUE(invalid("max_pool2d", {f32({1, 4, 4, 1})}, {{"ksize", {2}}},
                      {"max_pool2d: attribute 'ksize' (2) has 1 values, expected 2"}));
}

TEST(InferConvPool, Conv2dBackward) {
  EXPECT_EQ(out_dims("conv2d_backward_data", {f32({2, 26, 26, 32}), f32({3, 3, 1, 32})},
                     {{"input_shape", {2, 28, 28, 1}}}),
            (Dims{2, 28, 28, 1}));
  EXPECT_EQ(out_dims("conv2d_backward_filter", {f32({2, 28, 28, 1}), f32({2, 26, 26, 32})},
                     {{"filter_shape", {3, 3, 1, 32}}}),
            (Dims{3, 3, 1, 32}));
  EXPECT_TRUE(
      invalid("conv2d_backward_data", {f32({2, 25, 26, 32}), f32({3, 3, 1, 32})},
              {{"input_shape", {2, 28, 28, 1}}},
              {"conv2d_backward_data: input 0 (dy) has dims (2,25,26,32), expected (2,26,26,32)"}));
  EXPECT_TRUE(invalid("conv2d_backward_data", {f32({2, 26, 26, 32}), f32({3, 3, 1, 32})}, {},
                      {"conv2d_backward_data: missing required attribute 'input_shape' (ints)"}));
  EXPECT_TRUE(
      invalid("conv2d_backward_filter", {f32({2, 28, 28, 2}), f32({2, 26, 26, 32})},
              {{"filter_shape", {3, 3, 1, 32}}},
              {"attribute 'filter_shape' (3,3,1,32) has 1 channels in dim 2 (Ci), expected 2"}));
}

TEST(InferConvPool, PoolBackward) {
  EXPECT_EQ(out_dims("max_pool2d_backward", {f32({1, 26, 26, 3}), f32({1, 13, 13, 3})}),
            (Dims{1, 26, 26, 3}));
  EXPECT_EQ(
      out_dims("avg_pool2d_backward", {f32({1, 13, 13, 3})}, {{"input_shape", {1, 27, 27, 3}}}),
      (Dims{1, 27, 27, 3}));
  EXPECT_TRUE(
      invalid("max_pool2d_backward", {f32({1, 26, 26, 3}), f32({1, 12, 13, 3})}, {},
              {"max_pool2d_backward: input 1 (dy) has dims (1,12,13,3), expected (1,13,13,3)"}));
}

// The gradient ops autodiff emits for a residual block: conv2d_backward gives dx (x's dims) and
// dw (w's dims) and checks dy against conv2d(x, w); conv2d_backward_data_add's addend has dx's
// dims.
TEST(InferConvPool, Conv2dBackwardBothAndBackwardDataAdd) {
  Result<OpInstance> r = instantiate(
      "conv2d_backward", {f32({2, 4, 4, 6}), f32({2, 7, 7, 3}), f32({3, 3, 3, 6})},
      {{"padding", "SAME"}, {"strides", {2, 2}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 2u);
  EXPECT_EQ(r->output(0), f32({2, 7, 7, 3}));
  EXPECT_EQ(r->output(1), f32({3, 3, 3, 6}));
  EXPECT_TRUE(invalid("conv2d_backward", {f32({2, 4, 4, 6}), f32({2, 7, 7, 3}), f32({3, 3, 3, 6})},
                      {}, {"conv2d_backward: input 0 (dy) has dims (2,4,4,6), expected (2,5,5,6)"}));
  EXPECT_TRUE(invalid("conv2d_backward_data_add",
                      {f32({1, 4, 4, 6}), f32({3, 3, 2, 6}), f32({1, 6, 6, 3})},
                      {{"input_shape", {1, 6, 6, 2}}},
                      {"input 2 (addend) has dims (1,6,6,3), expected (1,6,6,2)"}));
}

}  // namespace
}  // namespace dlrt::ops
