// Shape inference, defaults, in-place pairs and errors of the batch normalization ops.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;

TEST(InferNorm, BatchNormKeepsXShapeInBothFormatsAndRank2) {
  const TensorType c3 = f32({3});
  for (auto [format, x] : {std::pair<const char*, Dims>{"NHWC", {2, 5, 7, 3}},
                           {"NCHW", {2, 3, 5, 7}},
                           {"NHWC", {4, 3}},
                           {"NCHW", {4, 3}}}) {
    SCOPED_TRACE(format);
    Result<OpInstance> r =
        instantiate("batch_norm", {f32(x), c3, c3, c3, c3}, {{"data_format", format}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->output(0), f32(x));
    EXPECT_EQ(r->attrs().at("epsilon").as_float(), 1e-5);  // ONNX's and PyTorch's default
  }
}

TEST(InferNorm, BatchNormTrainOutputsAndInPlacePairs) {
  const TensorType c = f32({11});
  Result<OpInstance> r =
      instantiate("batch_norm_train", {f32({1, 11, 3, 3}), c, c, c, c}, {{"data_format", "NCHW"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 5u);
  EXPECT_EQ(r->output(0), f32({1, 11, 3, 3}));
  for (int k = 1; k < 5; ++k) EXPECT_EQ(r->output(k), c);
  EXPECT_EQ(r->attrs().at("momentum").as_float(), 0.9);  // ONNX's side and default
  // running_mean <- running_mean, running_var <- running_var
  EXPECT_EQ(r->def().in_place, (std::vector<InPlace>{{1, 3}, {2, 4}}));
  EXPECT_TRUE(r->def().stateful);
  EXPECT_TRUE(find_op("batch_norm_grad")->no_gradient.size() > 0);
}

TEST(InferNorm, BatchNormGradShapes) {
  const TensorType x = f32({2, 5, 7, 3}), c = f32({3});
  Result<OpInstance> r = instantiate("batch_norm_grad", {x, x, c, c, c}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 3u);
  EXPECT_EQ(r->output(0), x);
  EXPECT_EQ(r->output(1), c);
  EXPECT_EQ(r->output(2), c);
}

// The residual tail: batch_norm_train's outputs (running statistics in place at inputs 4, 5);
// its backward op adds dresidual (x's dims) after dx, dscale, dbias.
TEST(InferNorm, BatchNormAddReluShapes) {
  const TensorType x = f32({2, 5, 7, 3}), c = f32({3});
  Result<OpInstance> f = instantiate("batch_norm_add_relu_train", {x, x, c, c, c, c}, {});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->outputs().size(), 5u);
  EXPECT_EQ(f->output(0), x);
  for (int k = 1; k < 5; ++k) EXPECT_EQ(f->output(k), c);
  Result<OpInstance> g = instantiate("batch_norm_add_relu_grad", {x, x, x, c, c, c}, {});
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(g->outputs().size(), 4u);
  EXPECT_EQ(g->output(0), x);
  EXPECT_EQ(g->output(1), c);
  EXPECT_EQ(g->output(2), c);
  EXPECT_EQ(g->output(3), x);
  EXPECT_TRUE(invalid("batch_norm_add_relu_train", {x, f32({2, 5, 7, 4}), c, c, c, c}, {},
                      {"batch_norm_add_relu_train: input 1 (residual) has dims (2,5,7,4), "
                       "expected (2,5,7,3) (the dims of input 0 (x))"}));
  EXPECT_TRUE(invalid("batch_norm_add_relu_train", {x, x, c, f32({4}), c, c}, {},
                      {"input 3 (bias) has dims (4), expected (3)"}));
  EXPECT_TRUE(invalid("batch_norm_add_relu_grad", {x, x, f32({2, 5, 7, 1}), c, c, c}, {},
                      {"input 2 (x) has dims (2,5,7,1), expected (2,5,7,3)"}));
}

TEST(InferNorm, Errors) {
  const TensorType c = f32({3});
  EXPECT_TRUE(invalid("batch_norm", {f32({2, 3, 4}), c, c, c, c}, {},
                      {"batch_norm: input 0 (x) has rank 3, expected rank 4 (N,H,W,C) or rank 2"}));
  EXPECT_TRUE(invalid("batch_norm", {f32({2, 5, 5, 3}), c, c, f32({4}), c}, {},
                      {"batch_norm: input 3 (mean) has dims (4), expected (3): one value per "
                       "channel of input 0 (x) (dim 3)"}));
  // NCHW: C is dim 1.
  EXPECT_TRUE(invalid("batch_norm", {f32({2, 5, 5, 3}), c, c, c, c}, {{"data_format", "NCHW"}},
                      {"input 1 (scale) has dims (3), expected (5)", "(dim 1)"}));
  EXPECT_TRUE(invalid("batch_norm", {f32({2, 3}), c, c, c, c}, {{"epsilon", 0.0}},
                      {"batch_norm: attribute 'epsilon' is 0, expected > 0"}));
  EXPECT_TRUE(
      invalid("batch_norm_train", {f32({2, 3}), c, c, c, c}, {{"momentum", 1.5}},
              {"batch_norm_train: attribute 'momentum' is 1.5, expected a value in [0, 1]"}));
  EXPECT_TRUE(invalid("batch_norm_grad", {f32({2, 3}), f32({3, 3}), c, c, c}, {},
                      {"batch_norm_grad: input 1 (x) has dims (3,3), expected (2,3)"}));
  EXPECT_TRUE(invalid("batch_norm", {f32({2, 3}), c, c, c, {DLRT_I32, {3}}}, {},
                      {"batch_norm: input 4 (var)"}));
}

}  // namespace
}  // namespace dlrt::ops
