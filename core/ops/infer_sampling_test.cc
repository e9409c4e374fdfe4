// Shape inference of multinomial (infer_sampling.cc) and the messages of bad calls.
#include <gtest/gtest.h>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::i64;
using testing::invalid;
using testing::out_dims;

TEST(InferSampling, MultinomialGivesI64IdsPerRow) {
  Result<OpInstance> r = instantiate("multinomial", {f32({8, 256})}, {{"num_samples", 3}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->output(0), (TensorType{DLRT_I64, {8, 3}}));
  EXPECT_EQ(out_dims("multinomial", {f32({1, 5})}), (Dims{1, 1}));  // num_samples 1
  EXPECT_EQ(out_dims("multinomial", {f32({2, 5})}, {{"seed", -1}}), (Dims{2, 1}));
  const OpDef* def = find_op("multinomial");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->uses_rng);  // gets the run count: each run draws anew
  EXPECT_FALSE(def->no_gradient.empty());
  EXPECT_FALSE(def->inputs[0].differentiable);
}

TEST(InferSampling, MultinomialErrors) {
  EXPECT_TRUE(invalid("multinomial", {f32({256})}, {}, {"multinomial", "rank", "(B,K)"}));
  EXPECT_TRUE(invalid("multinomial", {f32({2, 3, 4})}, {}, {"multinomial", "rank"}));
  EXPECT_TRUE(invalid("multinomial", {f32({2, 0})}, {},
                      {"multinomial: input 0 (logits) has dim 1 = 0 in (2,0), expected >= 1"}));
  EXPECT_TRUE(invalid("multinomial", {f32({2, 4})}, {{"num_samples", 0}},
                      {"multinomial", "num_samples"}));
  EXPECT_TRUE(invalid("multinomial", {i64({2, 4})}, {}, {"multinomial", "logits"}));
}

}  // namespace
}  // namespace dlrt::ops
