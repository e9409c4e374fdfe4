// Tests of instantiate's generic checks and of the materialised dlrt_op_desc.
#include "op_instance.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::fails_with;
using testing::i32;
using testing::invalid;

const dlrt_attr* find_c_attr(const dlrt_op_desc& d, const char* name) {
  for (size_t i = 0; i < d.num_attrs; ++i)
    if (std::strcmp(d.attrs[i]->name, name) == 0) return d.attrs[i];
  return nullptr;
}

TEST(OpInstance, UnknownOpIsNotFound) {
  EXPECT_TRUE(fails_with(instantiate("conv3d", {}, {}), DLRT_NOT_FOUND, {"unknown op 'conv3d'"}));
}

TEST(OpInstance, InputCount) {
  EXPECT_TRUE(
      invalid("conv2d", {f32({1, 28, 28, 1})}, {}, {"conv2d: expected 2 inputs (x, w), got 1"}));
}

TEST(OpInstance, InputDtypeAndTypeVariables) {
  EXPECT_TRUE(
      invalid("relu", {i32({3})}, {}, {"relu: input 0 (x) has dtype i32, expected f32|f16|bf16"}));
  EXPECT_TRUE(invalid("add", {f32({3}), {DLRT_F16, {3}}}, {},
                      {"add: input 1 (b) has dtype f16, expected f32 to match input 0 (a)"}));
  EXPECT_TRUE(invalid("relu", {{DLRT_DTYPE_INVALID, {3}}}, {}, {"has dtype dtype(0)"}));
}

TEST(OpInstance, NegativeOrZeroDims) {
  EXPECT_TRUE(invalid("relu", {f32({2, 0})}, {},
                      {"relu: input 0 (x) has dim 1 = 0 in (2,0), expected >= 1"}));
  EXPECT_TRUE(invalid("conv2d", {f32({1, -28, 28, 1}), f32({3, 3, 1, 32})}, {},
                      {"conv2d: input 0 (x) has dim 1 = -28"}));
  EXPECT_TRUE(
      invalid("fill", {}, {{"shape", {2, 0}}}, {"fill: attribute 'shape' (2,0) has 0 at index 1"}));
}

TEST(OpInstance, RankAboveMax) {
  EXPECT_TRUE(invalid("relu", {f32(Dims(9, 1))}, {}, {"rank 9, more than DLRT_MAX_RANK (8)"}));
}

TEST(OpInstance, DefaultsFilledInTheDescriptor) {
  Result<OpInstance> r = instantiate("conv2d", {f32({1, 28, 28, 1}), f32({3, 3, 1, 32})}, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const dlrt_op_desc& d = r->desc();
  EXPECT_EQ(d.struct_size, sizeof(dlrt_op_desc));
  EXPECT_STREQ(d.op, "conv2d");
  EXPECT_EQ(d.op_version, 1);  // ABI 1.2: the schema's version of conv2d
  ASSERT_EQ(d.num_attrs, 6u);
  // Sorted by name.
  EXPECT_STREQ(d.attrs[0]->name, "data_format");
  EXPECT_STREQ(d.attrs[2]->name, "groups");
  EXPECT_EQ(d.attrs[2]->type, DLRT_ATTR_INT);
  EXPECT_EQ(d.attrs[2]->i, 1);
  EXPECT_STREQ(d.attrs[4]->name, "pads");
  EXPECT_STREQ(d.attrs[5]->name, "strides");
  const dlrt_attr* strides = find_c_attr(d, "strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->struct_size, sizeof(dlrt_attr));
  EXPECT_EQ(strides->type, DLRT_ATTR_INTS);
  ASSERT_EQ(strides->count, 2u);
  EXPECT_EQ(strides->ints[0], 1);
  EXPECT_EQ(strides->ints[1], 1);
  const dlrt_attr* dil = find_c_attr(d, "dilations");
  ASSERT_NE(dil, nullptr);
  EXPECT_EQ(dil->count, 2u);
  EXPECT_EQ(dil->ints[0], 1);
  EXPECT_STREQ(find_c_attr(d, "padding")->s, "VALID");
  EXPECT_STREQ(find_c_attr(d, "data_format")->s, "NHWC");
}

TEST(OpInstance, TensorDescsAndStablePointersAfterMove) {
  Result<OpInstance> r =
      instantiate("conv2d", {f32({1, 28, 28, 1}), f32({3, 3, 1, 32})}, {{"padding", "SAME"}});
  ASSERT_TRUE(r.ok());
  OpInstance moved = std::move(*r);
  std::vector<OpInstance> many;
  many.push_back(std::move(moved));
  for (int i = 0; i < 20; ++i)  // force reallocation of the vector
    many.push_back(std::move(*instantiate("relu", {f32({2})}, {})));
  const dlrt_op_desc& d = many[0].desc();
  ASSERT_EQ(d.num_inputs, 2u);
  ASSERT_EQ(d.num_outputs, 1u);
  EXPECT_EQ(d.inputs[1]->struct_size, sizeof(dlrt_tensor_desc));
  EXPECT_EQ(d.inputs[1]->rank, 4);
  EXPECT_EQ(d.inputs[1]->dims[3], 32);
  EXPECT_EQ(d.outputs[0]->dtype, DLRT_F32);
  EXPECT_EQ(d.outputs[0]->layout, DLRT_LAYOUT_DENSE);
  EXPECT_EQ(d.outputs[0]->dims[1], 28);
  EXPECT_STREQ(find_c_attr(d, "padding")->s, "SAME");
  EXPECT_EQ(many[0].attrs().at("padding").as_string(), "SAME");
}

TEST(OpInstance, InstantiateDescRoundTrip) {
  Result<OpInstance> a = instantiate("max_pool2d", {f32({2, 7, 7, 3})}, {{"padding", "SAME"}});
  ASSERT_TRUE(a.ok());
  Result<OpInstance> b = instantiate_desc(a->desc());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->output(0).dims, (Dims{2, 4, 4, 3}));
  EXPECT_EQ(b->attrs(), a->attrs());
}

TEST(OpInstance, InstantiateDescFillsDefaultsAndChecksOutputs) {
  dlrt_tensor_desc x{DLRT_STRUCT_SIZE(dlrt_tensor_desc), DLRT_F32, 2, {3, 4}, DLRT_LAYOUT_DENSE, 0};
  dlrt_tensor_desc y = x;
  y.dims[1] = 5;  // wrong: softmax keeps the shape
  const dlrt_tensor_desc* ins[] = {&x};
  const dlrt_tensor_desc* outs[] = {&y};
  dlrt_op_desc d{DLRT_STRUCT_SIZE(dlrt_op_desc), "softmax", 1, ins, 1, outs, 0, nullptr};
  EXPECT_TRUE(fails_with(instantiate_desc(d), DLRT_INVALID_ARGUMENT,
                         {"softmax: output 0 (y) is f32(3,5) but inference gives f32(3,4)"}));
  y.dims[1] = 4;
  Result<OpInstance> r = instantiate_desc(d);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("axis").as_int(), -1);  // default filled
  EXPECT_EQ(r->desc().num_attrs, 1u);
}

TEST(OpInstance, InstantiateDescRejectsMalformedDescriptors) {
  dlrt_op_desc d{DLRT_STRUCT_SIZE(dlrt_op_desc), nullptr, 0, nullptr, 0, nullptr, 0, nullptr};
  EXPECT_TRUE(fails_with(instantiate_desc(d), DLRT_INVALID_ARGUMENT, {"NULL op name"}));
  d.op = "relu";
  d.num_inputs = 1;
  EXPECT_TRUE(
      fails_with(instantiate_desc(d), DLRT_INVALID_ARGUMENT, {"relu: 1 inputs but a NULL array"}));
  dlrt_tensor_desc x{DLRT_STRUCT_SIZE(dlrt_tensor_desc), DLRT_F32, 9, {}, 0, 0};
  const dlrt_tensor_desc* ins[] = {&x};
  d.inputs = ins;
  EXPECT_TRUE(fails_with(instantiate_desc(d), DLRT_INVALID_ARGUMENT, {"input 0 has rank 9"}));
}

}  // namespace
}  // namespace dlrt::ops
