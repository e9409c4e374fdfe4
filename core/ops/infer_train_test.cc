// Shape inference and in-place pairs of the optimizer updates.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;

TEST(InferTrain, SgdUpdate) {
  const TensorType w = f32({3, 3, 1, 32});
  Result<OpInstance> r = instantiate("sgd_update", {w, w, w, f32({})}, {{"momentum", 0.9}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 2u);
  EXPECT_EQ(r->output(1), w);
  EXPECT_FALSE(r->attrs().at("nesterov").as_bool());
  // Version 2: the learning rate is the last input, not an attribute.
  EXPECT_EQ(r->desc().op_version, 2);
  EXPECT_EQ(find_op("sgd_update")->in_place, (std::vector<InPlace>{{0, 0}, {1, 2}}));
  EXPECT_TRUE(invalid("sgd_update", {f32({3}), f32({3}), f32({3})}, {}, {"sgd_update", "4"}));
  EXPECT_TRUE(invalid("sgd_update", {f32({3}), f32({3}), f32({3}), f32({})},
                      {{"learning_rate", 0.1}}, {"sgd_update: unknown attribute 'learning_rate'"}));
  EXPECT_TRUE(
      invalid("sgd_update", {f32({3}), f32({4}), f32({3}), f32({})}, {},
              {"sgd_update: input 1 (grad) has dims (4), expected (3) to match input 0 (param)"}));
  EXPECT_TRUE(invalid("sgd_update", {f32({3}), f32({3}), f32({3}), f32({1})}, {},
                      {"sgd_update: input 3 (learning_rate) must have rank 0 (), got rank 1"}));
}

TEST(InferTrain, AdamUpdateInPlacePairs) {
  const TensorType p = f32({576, 64});
  Result<OpInstance> r = instantiate("adam_update", {p, p, p, p, f32({}), f32({})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs().size(), 3u);
  for (const TensorType& o : r->outputs()) EXPECT_EQ(o, p);
  // param <- param, m <- m, v <- v
  EXPECT_EQ(r->def().in_place, (std::vector<InPlace>{{0, 0}, {1, 2}, {2, 3}}));
  EXPECT_EQ(r->attrs().at("epsilon").as_float(), 1e-7);
  EXPECT_EQ(r->desc().num_attrs, 3u);
  EXPECT_EQ(r->desc().op_version, 2);
}

TEST(InferTrain, AdamUpdateErrors) {
  const TensorType p = f32({10}), s = f32({});
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, f32({1}), s}, {},
                      {"adam_update: input 4 (step) must have rank 0 (), got rank 1"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, f32({11}), s, s}, {},
                      {"adam_update: input 3 (v) has dims (11), expected (10)"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, s, s}, {{"beta1", 1.0}},
                      {"adam_update: attribute 'beta1' is 1, expected a value in [0, 1)"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, {DLRT_I64, {}}, s}, {},
                      {"adam_update: input 4 (step) has dtype i64, expected f32"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, s, {DLRT_F64, {}}}, {},
                      {"adam_update: input 5 (learning_rate) has dtype f64"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, s, f32({2})}, {},
                      {"adam_update: input 5 (learning_rate) must have rank 0 (), got rank 1"}));
  EXPECT_TRUE(invalid("adam_update", {p, p, p, p, s}, {}, {"adam_update", "6"}));
}

}  // namespace
}  // namespace dlrt::ops
