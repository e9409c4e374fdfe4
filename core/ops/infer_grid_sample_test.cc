// Shape inference of grid_sample and grid_sample_grad: output dims in both layouts, the
// defaults plugins receive (ONNX's), and the messages of bad calls.
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferGridSample, OutputDimsBothLayouts) {
  // x (N,H,W,C) = (2,3,4,5), grid (N,OH,OW,2) = (2,6,7,2) -> y (2,6,7,5)
  EXPECT_EQ(out_dims("grid_sample", {f32({2, 3, 4, 5}), f32({2, 6, 7, 2})}), (Dims{2, 6, 7, 5}));
  EXPECT_EQ(out_dims("grid_sample", {f32({2, 5, 3, 4}), f32({2, 1, 7, 2})},
                     {{"data_format", "NCHW"}, {"mode", "bicubic"}}),
            (Dims{2, 5, 1, 7}));
}

TEST(InferGridSample, DefaultsAreOnnxs) {
  Result<OpInstance> r = instantiate("grid_sample", {f32({1, 2, 2, 1}), f32({1, 3, 3, 2})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("mode"), AttrValue("bilinear"));
  EXPECT_EQ(r->attrs().at("padding_mode"), AttrValue("zeros"));
  EXPECT_EQ(r->attrs().at("align_corners"), AttrValue(false));
  EXPECT_EQ(r->attrs().at("data_format"), AttrValue("NHWC"));
}

TEST(InferGridSample, GradGivesXAndGridShapes) {
  Result<OpInstance> r = instantiate(
      "grid_sample_grad", {f32({2, 5, 1, 7}), f32({2, 5, 3, 4}), f32({2, 1, 7, 2})},
      {{"data_format", "NCHW"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0).dims, (Dims{2, 5, 3, 4}));
  EXPECT_EQ(r->output(1).dims, (Dims{2, 1, 7, 2}));
}

TEST(InferGridSample, Errors) {
  EXPECT_TRUE(invalid("grid_sample", {f32({2, 3, 4}), f32({2, 1, 1, 2})}, {},
                      {"grid_sample: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  EXPECT_TRUE(invalid("grid_sample", {f32({2, 3, 4, 1}), f32({2, 1, 1, 3})}, {},
                      {"grid_sample: input 1 (grid) has dims (2,1,1,3), expected (N,OH,OW,2) "
                       "with N = 2 (that of input 0 (x) (2,3,4,1))"}));
  EXPECT_TRUE(invalid("grid_sample", {f32({2, 3, 4, 1}), f32({1, 1, 1, 2})}, {},
                      {"grid_sample", "input 1 (grid)", "N = 2"}));
  EXPECT_TRUE(invalid("grid_sample", {f32({2, 3, 4, 1}), f32({2, 1, 1, 2})},
                      {{"mode", "linear"}}, {"grid_sample", "mode", "linear"}));
  EXPECT_TRUE(invalid("grid_sample", {f32({2, 3, 4, 1}), f32({2, 1, 1, 2})},
                      {{"padding_mode", "wrap"}}, {"grid_sample", "padding_mode", "wrap"}));
  EXPECT_TRUE(invalid("grid_sample_grad",
                      {f32({2, 1, 2, 1}), f32({2, 3, 4, 1}), f32({2, 1, 1, 2})}, {},
                      {"grid_sample_grad: input 0 (dy) has dims (2,1,2,1), expected (2,1,1,1) "
                       "(grid_sample's y for input 1 (x) (2,3,4,1) and input 2 (grid) "
                       "(2,1,1,2))"}));
}

}  // namespace
}  // namespace dlrt::ops
