// Shape inference of layer_norm and layer_norm_grad: the row statistics' dims, the defaults
// plugins receive, and the messages of bad calls (another axis, wrong parameter dims).
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferLayerNorm, OutputsAndRowStatistics) {
  const std::vector<TensorType> in = {f32({2, 5, 8}), f32({8}), f32({8})};
  EXPECT_EQ(out_dims("layer_norm", in), (Dims{2, 5, 8}));
  EXPECT_EQ(out_dims("layer_norm", in, {}, 1), (Dims{2, 5}));
  EXPECT_EQ(out_dims("layer_norm", in, {}, 2), (Dims{2, 5}));
  EXPECT_EQ(out_dims("layer_norm", {f32({7}), f32({7}), f32({7})}, {}, 1), (Dims{}));
  EXPECT_EQ(out_dims("layer_norm", in, {{"axis", int64_t{2}}}), (Dims{2, 5, 8}));
  const std::vector<TensorType> g = {f32({2, 5, 8}), f32({2, 5, 8}), f32({8}), f32({2, 5}),
                                     f32({2, 5})};
  EXPECT_EQ(out_dims("layer_norm_grad", g), (Dims{2, 5, 8}));
  EXPECT_EQ(out_dims("layer_norm_grad", g, {}, 1), (Dims{8}));
  EXPECT_EQ(out_dims("layer_norm_grad", g, {}, 2), (Dims{8}));
}

TEST(InferLayerNorm, DefaultsArePyTorchs) {
  Result<OpInstance> r = instantiate("layer_norm", {f32({3, 4}), f32({4}), f32({4})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("epsilon"), AttrValue(1e-5));
  EXPECT_EQ(r->attrs().at("axis"), AttrValue(int64_t{-1}));
}

TEST(InferLayerNorm, Errors) {
  const std::vector<TensorType> in = {f32({2, 5, 8}), f32({8}), f32({8})};
  EXPECT_TRUE(invalid("layer_norm", in, {{"axis", int64_t{1}}},
                      {"layer_norm", "attribute 'axis' is 1", "last axis only"}));
  EXPECT_TRUE(invalid("layer_norm", in, {{"epsilon", 0.0}}, {"layer_norm", "epsilon"}));
  EXPECT_TRUE(invalid("layer_norm", {f32({2, 5, 8}), f32({5}), f32({8})}, {},
                      {"layer_norm: input 1 (gamma) has dims (5), expected (8)"}));
  EXPECT_TRUE(invalid("layer_norm_grad",
                      {f32({2, 5, 8}), f32({2, 5, 8}), f32({8}), f32({2}), f32({2, 5})}, {},
                      {"layer_norm_grad", "mean", "expected (2,5)"}));
  EXPECT_TRUE(invalid("layer_norm_grad",
                      {f32({2, 5, 8}), f32({2, 4, 8}), f32({8}), f32({2, 5}), f32({2, 5})}, {},
                      {"layer_norm_grad", "(x)", "expected (2,5,8)"}));
}

}  // namespace
}  // namespace dlrt::ops
