// Shape inference and in-place pairs of the optimizer updates.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;

TEST(InferTrain, SgdUpdate) {
  Result<OpInstance> r =
      instantiate("sgd_update", {f32({3, 3, 1, 32}), f32({3, 3, 1, 32}), f32({3, 3, 1, 32})},
                  {{"learning_rate", 0.01}, {"momentum", 0.9}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 2u);
  EXPECT_EQ(r->output(1), f32({3, 3, 1, 32}));
  EXPECT_FALSE(r->attrs().at("nesterov").as_bool());
  EXPECT_EQ(find_op("sgd_update")->in_place, (std::vector<InPlace>{{0, 0}, {1, 2}}));
  EXPECT_TRUE(invalid("sgd_update", {f32({3}), f32({3}), f32({3})}, {},
                      {"sgd_update: missing required attribute 'learning_rate' (float)"}));
  EXPECT_TRUE(
      invalid("sgd_update", {f32({3}), f32({4}), f32({3})}, {{"learning_rate", 0.1}},
              {"sgd_update: input 1 (grad) has dims (4), expected (3) to match input 0 (param)"}));
}

TEST(InferTrain, AdamUpdateInPlacePairs) {
  const TensorType p = f32({576, 64});
  Result<OpInstance> r = instantiate("adam_update", {p, p, p, p, f32({})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 3u);
  for (const TensorType& o : r->outputs()) EXPECT_EQ(o, p);
  // param <- param, m <- m, v <- v
  EXPECT_EQ(r->def().in_place, (std::vector<InPlace>{{0, 0}, {1, 2}, {2, 3}}));
  EXPECT_EQ(r->attrs().at("learning_rate").as_float(), 0.001);
  EXPECT_EQ(r->attrs().at("epsilon").as_float(), 1e-7);
  EXPECT_EQ(r->desc().num_attrs, 4u);
}

TEST(InferTrain, AdamUpdateErrors) {
  const TensorType p = f32({10});
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, f32({1})}, {},
                      {"adam_update: input 4 (step) must have rank 0 (), got rank 1"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, f32({11}), f32({})}, {},
                      {"adam_update: input 3 (v) has dims (11), expected (10)"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, f32({})}, {{"beta1", 1.0}},
                      {"adam_update: attribute 'beta1' is 1, expected a value in [0, 1)"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, {DLRT_I64, {}}}, {},
                      {"adam_update: input 4 (step) has dtype i64, expected f32"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, f32({})}, {{"learning_rate", -1.0}},
                      {"adam_update: attribute 'learning_rate' is -1, expected > 0"}));
}

}  // namespace
}  // namespace dlrt::ops
