// Shape inference of causal_mask, attention and attention_grad (infer_attention.cc): the
// outputs' dims, the defaults plugins receive, and the messages of bad calls.
#include <gtest/gtest.h>

#include <cmath>

#include "op_registry.hpp"
#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferAttention, CausalMask) {
  EXPECT_EQ(out_dims("causal_mask", {f32({2, 4, 4, 7})}), (Dims{2, 4, 4, 7}));
  EXPECT_EQ(out_dims("causal_mask", {f32({1, 9})}), (Dims{1, 9}));
  Result<OpInstance> r = instantiate("causal_mask", {f32({3, 3})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double fill = r->attrs().at("fill").as_float();
  EXPECT_TRUE(std::isinf(fill) && fill < 0);
  EXPECT_TRUE(invalid("causal_mask", {f32({2, 5, 4})}, {},
                      {"causal_mask", "Tq = 5 > Tk = 4", "expected Tq <= Tk"}));
  EXPECT_TRUE(invalid("causal_mask", {f32({4})}, {}, {"causal_mask", "rank"}));
}

TEST(InferAttention, OutputsAndLse) {
  const std::vector<TensorType> in = {f32({2, 4, 5, 8}), f32({2, 4, 7, 8}), f32({2, 4, 7, 3})};
  EXPECT_EQ(out_dims("attention", in), (Dims{2, 4, 5, 3}));
  EXPECT_EQ(out_dims("attention", in, {}, 1), (Dims{2, 4, 5}));
  EXPECT_EQ(out_dims("attention", in, {{"causal", 1}}), (Dims{2, 4, 5, 3}));
  EXPECT_EQ(out_dims("attention", {f32({3, 1, 8}), f32({3, 9, 8}), f32({3, 9, 8})},
                     {{"causal", 1}}, 1),
            (Dims{3, 1}));
  // Tq > Tk is fine without the mask.
  EXPECT_EQ(out_dims("attention", {f32({3, 6, 8}), f32({3, 2, 8}), f32({3, 2, 8})}),
            (Dims{3, 6, 8}));
  const std::vector<TensorType> g = {f32({2, 4, 5, 3}), f32({2, 4, 5, 8}), f32({2, 4, 7, 8}),
                                     f32({2, 4, 7, 3}), f32({2, 4, 5, 3}), f32({2, 4, 5})};
  EXPECT_EQ(out_dims("attention_grad", g), (Dims{2, 4, 5, 8}));
  EXPECT_EQ(out_dims("attention_grad", g, {}, 1), (Dims{2, 4, 7, 8}));
  EXPECT_EQ(out_dims("attention_grad", g, {}, 2), (Dims{2, 4, 7, 3}));
  EXPECT_FALSE(find_op("attention_grad")->no_gradient.empty());
}

TEST(InferAttention, Defaults) {
  Result<OpInstance> r =
      instantiate("attention", {f32({2, 3, 4}), f32({2, 3, 4}), f32({2, 3, 4})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("scale"), AttrValue(0.0));
  EXPECT_EQ(r->attrs().at("causal"), AttrValue(int64_t{0}));
}

TEST(InferAttention, Errors) {
  const TensorType q = f32({2, 5, 8}), k = f32({2, 7, 8}), v = f32({2, 7, 4});
  EXPECT_TRUE(invalid("attention", {f32({5, 8}), f32({7, 8}), f32({7, 4})}, {},
                      {"attention", "input 0 (q)", "expected rank >= 3"}));
  EXPECT_TRUE(invalid("attention", {q, f32({1, 2, 7, 8}), v}, {},
                      {"attention", "input 1 (k)", "expected rank 3"}));
  EXPECT_TRUE(invalid("attention", {q, f32({3, 7, 8}), v}, {},
                      {"attention", "input 1 (k)", "expected the batch dims (2)"}));
  EXPECT_TRUE(invalid("attention", {q, f32({2, 7, 6}), v}, {},
                      {"attention", "input 1 (k)", "expected (B..., Tk, 8)"}));
  EXPECT_TRUE(invalid("attention", {q, k, f32({2, 6, 4})}, {},
                      {"attention", "input 2 (v)", "one value per key (Tk = 7)"}));
  EXPECT_TRUE(invalid("attention", {f32({2, 9, 8}), k, v}, {{"causal", 1}},
                      {"attention", "causal with Tq = 9 > Tk = 7", "expected Tq <= Tk"}));
  EXPECT_TRUE(invalid("attention", {q, k, v}, {{"causal", 2}},
                      {"attention", "attribute 'causal' is 2", "expected 0"}));
  EXPECT_TRUE(invalid("attention", {q, k, v},
                      {{"scale", std::numeric_limits<double>::infinity()}},
                      {"attention", "attribute 'scale'", "finite"}));
  const TensorType o = f32({2, 5, 4}), lse = f32({2, 5});
  EXPECT_TRUE(invalid("attention_grad", {f32({2, 5, 8}), q, k, v, o, lse}, {},
                      {"attention_grad", "input 0 (do)", "expected (2,5,4)"}));
  EXPECT_TRUE(invalid("attention_grad", {o, q, k, v, o, f32({2, 7})}, {},
                      {"attention_grad", "input 5 (lse)", "expected (2,5)"}));
}

}  // namespace
}  // namespace dlrt::ops
