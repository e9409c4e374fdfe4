// c_api_op_signature_test.cc: dlrt_op_signature_get against the op schema it reads
// (core/ops): names, operands, defaults and flags of a few ops whose schema is known, every op
// answering, and the errors of a bad call.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ops/op_registry.hpp"

namespace {

struct StatusFree {
  void operator()(dlrt_status* s) const { dlrt_status_free(s); }
};
using StatusPtr = std::unique_ptr<dlrt_status, StatusFree>;

dlrt_op_signature signature(const char* op) {
  dlrt_op_signature s{};
  s.struct_size = DLRT_STRUCT_SIZE(dlrt_op_signature);
  StatusPtr status(dlrt_op_signature_get(op, &s));
  EXPECT_EQ(status, nullptr) << op << ": " << dlrt_status_message(status.get());
  return s;
}

const dlrt_op_attr_info* attr(const dlrt_op_signature& s, const std::string& name) {
  for (size_t i = 0; i < s.num_attrs; ++i)
    if (name == s.attrs[i]->name) return s.attrs[i];
  return nullptr;
}

TEST(OpSignature, Conv2dHasItsOperandsAndDefaults) {
  const dlrt_op_signature s = signature("conv2d");
  EXPECT_STREQ(s.name, "conv2d");
  ASSERT_GE(s.num_inputs, 2u);
  EXPECT_STREQ(s.inputs[0]->name, "x");
  EXPECT_EQ(s.inputs[0]->variadic, 0);
  EXPECT_EQ(s.inputs[0]->min_count, 1);
  EXPECT_EQ(s.inputs[0]->type_var, 'T');
  EXPECT_EQ(s.inputs[1]->type_var, s.inputs[0]->type_var);  // x and w share a dtype
  ASSERT_GE(s.inputs[0]->num_dtypes, 1u);
  EXPECT_EQ(s.inputs[0]->dtypes[0], DLRT_F32);
  ASSERT_EQ(s.num_outputs, 1u);
  EXPECT_EQ(s.differentiable, 1);
  EXPECT_STREQ(s.no_gradient_reason, "");
  const dlrt_op_attr_info* padding = attr(s, "padding");
  ASSERT_NE(padding, nullptr);
  EXPECT_EQ(padding->type, DLRT_ATTR_STRING);
  EXPECT_EQ(padding->required, 0);
  ASSERT_NE(padding->default_value, nullptr);
  EXPECT_STREQ(padding->default_value->s, "VALID");
  ASSERT_GE(padding->num_allowed_strings, 2u);
  const dlrt_op_attr_info* strides = attr(s, "strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->type, DLRT_ATTR_INTS);
  ASSERT_NE(strides->default_value, nullptr);
  EXPECT_EQ(strides->default_value->count, 2u);
}

TEST(OpSignature, VariadicRandomAndGradientFreeOpsSayWhatTheyAre) {
  const dlrt_op_signature concat = signature("concat");
  ASSERT_EQ(concat.num_inputs, 1u);
  EXPECT_EQ(concat.inputs[0]->variadic, 1);
  const dlrt_op_signature normal = signature("random_normal");
  EXPECT_EQ(normal.uses_rng, 1);
  EXPECT_EQ(normal.num_inputs, 0u);
  const dlrt_op_attr_info* shape = attr(normal, "shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->type, DLRT_ATTR_INTS);
  const dlrt_op_signature argmax = signature("argmax");
  EXPECT_EQ(argmax.differentiable, 0);
  EXPECT_STRNE(argmax.no_gradient_reason, "");
  const dlrt_op_signature adam = signature("adam_update");
  EXPECT_EQ(adam.stateful, 1);
}

TEST(OpSignature, EveryOpOfTheSchemaAnswersWithItsOwnTables) {
  for (const dlrt::ops::OpDef* def : dlrt::ops::all_ops()) {
    const dlrt_op_signature s = signature(def->name.c_str());
    EXPECT_EQ(s.name, def->name) << def->name;
    EXPECT_EQ(s.num_inputs, def->inputs.size()) << def->name;
    EXPECT_EQ(s.num_outputs, def->outputs.size()) << def->name;
    ASSERT_EQ(s.num_attrs, def->attrs.size()) << def->name;
    for (size_t i = 0; i < s.num_attrs; ++i) {
      EXPECT_EQ(s.attrs[i]->name, def->attrs[i].name) << def->name;
      EXPECT_EQ(s.attrs[i]->required != 0, s.attrs[i]->default_value == nullptr) << def->name;
    }
  }
  // The pointers are static: a second call gives the same storage.
  EXPECT_EQ(signature("relu").inputs, signature("relu").inputs);
}

TEST(OpSignature, BadCallsAreErrorsThatSayWhatWasWrong) {
  dlrt_op_signature s{};
  s.struct_size = DLRT_STRUCT_SIZE(dlrt_op_signature);
  StatusPtr unknown(dlrt_op_signature_get("no_such_op", &s));
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(dlrt_status_code(unknown.get()), DLRT_NOT_FOUND);
  EXPECT_NE(std::string(dlrt_status_message(unknown.get())).find("no_such_op"), std::string::npos);
  StatusPtr null_op(dlrt_op_signature_get(nullptr, &s));
  ASSERT_NE(null_op, nullptr);
  EXPECT_EQ(dlrt_status_code(null_op.get()), DLRT_INVALID_ARGUMENT);
  StatusPtr null_out(dlrt_op_signature_get("relu", nullptr));
  ASSERT_NE(null_out, nullptr);
  EXPECT_EQ(dlrt_status_code(null_out.get()), DLRT_INVALID_ARGUMENT);
}

}  // namespace
