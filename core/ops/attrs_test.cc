// Tests of attribute values, resolve_attrs (defaults, unknown names, types, restrictions)
// and the dlrt_attr round trip.
#include "attrs.hpp"

#include <gtest/gtest.h>

#include "status_matchers.hpp"

namespace dlrt::ops {
namespace {
using testing::fails_with;

std::vector<AttrSpec> specs() {
  return {optional_attr("strides", Ints{1, 1}).exactly(2).at_least(1),
          optional_attr("padding", "VALID").one_of({"VALID", "SAME"}), optional_attr("lr", 0.5),
          required_attr("shape", DLRT_ATTR_INTS),
          optional_attr("dtype", DLRT_F32).dtypes({DLRT_F32, DLRT_F16})};
}

TEST(Attrs, ValueTypes) {
  EXPECT_EQ(AttrValue(3).type(), DLRT_ATTR_INT);
  EXPECT_EQ(AttrValue(int64_t{3}).type(), DLRT_ATTR_INT);
  EXPECT_EQ(AttrValue(0.5).type(), DLRT_ATTR_FLOAT);
  EXPECT_EQ(AttrValue(true).type(), DLRT_ATTR_BOOL);
  EXPECT_EQ(AttrValue("SAME").type(), DLRT_ATTR_STRING);
  EXPECT_EQ(AttrValue({2, 2}).type(), DLRT_ATTR_INTS);
  EXPECT_EQ(AttrValue(Floats{0.5}).type(), DLRT_ATTR_FLOATS);
  EXPECT_EQ(AttrValue(DLRT_I64).type(), DLRT_ATTR_DTYPE);
  EXPECT_EQ(to_string(AttrValue({2, -1})), "(2,-1)");
  EXPECT_EQ(to_string(AttrValue("SAME")), "\"SAME\"");
  EXPECT_EQ(to_string(AttrValue(DLRT_I32)), "i32");
}

TEST(Attrs, DefaultsAreFilled) {
  Result<AttrMap> r = resolve_attrs("op", specs(), {{"shape", {4}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->at("strides").as_ints(), (Ints{1, 1}));
  EXPECT_EQ(r->at("padding").as_string(), "VALID");
  EXPECT_EQ(r->at("lr").as_float(), 0.5);
  EXPECT_EQ(r->at("dtype").as_dtype(), DLRT_F32);
  EXPECT_EQ(r->size(), 5u);
}

TEST(Attrs, UnknownAttributeListsTheAcceptedOnes) {
  EXPECT_TRUE(fails_with(
      resolve_attrs("op", specs(), {{"shape", {4}}, {"stride", {2, 2}}}), DLRT_INVALID_ARGUMENT,
      {"op: unknown attribute 'stride'", "(accepted: dtype, lr, padding, shape, strides)"}));
  EXPECT_TRUE(fails_with(resolve_attrs("relu", {}, {{"alpha", 0.1}}), DLRT_INVALID_ARGUMENT,
                         {"relu: unknown attribute 'alpha' (accepted: none)"}));
}

TEST(Attrs, WrongTypeMissingRequiredAndRestrictions) {
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {{"shape", {4}}, {"strides", "2"}}),
                         DLRT_INVALID_ARGUMENT, {"'strides' must be ints, got string \"2\""}));
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {}), DLRT_INVALID_ARGUMENT,
                         {"missing required attribute 'shape' (ints)"}));
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {{"shape", {4}}, {"padding", "same"}}),
                         DLRT_INVALID_ARGUMENT, {"'padding' is \"same\"", "\"VALID\", \"SAME\""}));
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {{"shape", {4}}, {"strides", {1, 1, 1}}}),
                         DLRT_INVALID_ARGUMENT, {"'strides' (1,1,1) has 3 values, expected 2"}));
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {{"shape", {4}}, {"strides", {1, 0}}}),
                         DLRT_INVALID_ARGUMENT, {"has 0 at index 1, expected >= 1"}));
  EXPECT_TRUE(fails_with(resolve_attrs("op", specs(), {{"shape", {4}}, {"dtype", DLRT_I32}}),
                         DLRT_INVALID_ARGUMENT, {"'dtype' is i32, expected f32|f16"}));
}

TEST(Attrs, IntWidensToFloat) {
  Result<AttrMap> r = resolve_attrs("op", specs(), {{"shape", {4}}, {"lr", 1}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at("lr").type(), DLRT_ATTR_FLOAT);
  EXPECT_EQ(r->at("lr").as_float(), 1.0);
}

TEST(Attrs, CRoundTrip) {
  for (const AttrValue& v :
       {AttrValue(7), AttrValue(0.25), AttrValue(true), AttrValue("SAME"), AttrValue({1, 2, 3}),
        AttrValue(Floats{0.5, 2}), AttrValue(DLRT_I64), AttrValue(Ints{})}) {
    const std::string name = "a";
    const dlrt_attr c = to_c_attr(name, v);
    EXPECT_EQ(c.struct_size, sizeof(dlrt_attr));
    Result<AttrValue> back = attr_from_c("op", c);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, v) << to_string(v);
  }
}

TEST(Attrs, MalformedCAttrs) {
  dlrt_attr a{};
  a.struct_size = sizeof(dlrt_attr);
  a.name = "padding";
  a.type = DLRT_ATTR_STRING;
  EXPECT_TRUE(fails_with(attr_from_c("conv2d", a), DLRT_INVALID_ARGUMENT,
                         {"conv2d: string attribute 'padding' is NULL"}));
  a.type = DLRT_ATTR_BOOL;
  a.i = 2;
  EXPECT_TRUE(fails_with(attr_from_c("op", a), DLRT_INVALID_ARGUMENT, {"expected 0 or 1"}));
  a.type = DLRT_ATTR_INTS;
  a.count = 2;
  EXPECT_TRUE(fails_with(attr_from_c("op", a), DLRT_INVALID_ARGUMENT, {"NULL array"}));
  a.type = 99;
  EXPECT_TRUE(fails_with(attr_from_c("op", a), DLRT_INVALID_ARGUMENT, {"unknown type 99"}));
}

}  // namespace
}  // namespace dlrt::ops
