// Shape inference of lstm_cell and lstm_cell_grad: the outputs' dims and the messages of bad
// calls (a zx that is not (B,4H), a state of another batch, a recurrent kernel of another H).
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferRnn, LstmCellOutputs) {
  const std::vector<TensorType> in = {f32({3, 20}), f32({3, 5}), f32({3, 5}), f32({5, 20})};
  EXPECT_EQ(out_dims("lstm_cell", in), (Dims{3, 5}));
  EXPECT_EQ(out_dims("lstm_cell", in, {}, 1), (Dims{3, 5}));
  EXPECT_EQ(out_dims("lstm_cell", in, {}, 2), (Dims{3, 20}));
  const std::vector<TensorType> g = {f32({3, 5}), f32({3, 5}), f32({3, 5}), f32({3, 5}),
                                     f32({3, 20})};
  EXPECT_EQ(out_dims("lstm_cell_grad", g), (Dims{3, 20}));
  EXPECT_EQ(out_dims("lstm_cell_grad", g, {}, 1), (Dims{3, 5}));
}

TEST(InferRnn, LstmCellErrors) {
  EXPECT_TRUE(invalid("lstm_cell", {f32({3, 16}), f32({3, 5}), f32({3, 5}), f32({5, 20})}, {},
                      {"lstm_cell: input 0 (zx) has dims (3,16), expected (3,20)", "(i, f, g, o)"}));
  EXPECT_TRUE(invalid("lstm_cell", {f32({3, 20}), f32({5}), f32({3, 5}), f32({5, 20})}, {},
                      {"lstm_cell: input 1 (h) has dims (5), expected (B,H)"}));
  EXPECT_TRUE(invalid("lstm_cell", {f32({3, 20}), f32({3, 5}), f32({2, 5}), f32({5, 20})}, {},
                      {"input 2 (c) has dims (2,5), expected (3,5)"}));
  EXPECT_TRUE(invalid("lstm_cell", {f32({3, 20}), f32({3, 5}), f32({3, 5}), f32({20, 5})}, {},
                      {"input 3 (U) has dims (20,5), expected (5,20)", "recurrent kernel"}));
  EXPECT_TRUE(invalid("lstm_cell_grad",
                      {f32({3, 5}), f32({3, 5}), f32({3, 5}), f32({3, 4}), f32({3, 20})}, {},
                      {"lstm_cell_grad", "(c_next) has dims (3,4), expected (3,5)"}));
  EXPECT_TRUE(invalid("lstm_cell_grad",
                      {f32({3, 5}), f32({3, 5}), f32({3, 5}), f32({3, 5}), f32({3, 5})}, {},
                      {"lstm_cell_grad", "(act) has dims (3,5), expected (3,20)"}));
}

}  // namespace
}  // namespace dlrt::ops
