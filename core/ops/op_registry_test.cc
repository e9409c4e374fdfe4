// Tests of the registry as a whole: every op is there exactly once and its definition is
// self-consistent.
#include "op_registry.hpp"

#include <gtest/gtest.h>

#include <set>

namespace dlrt::ops {
namespace {

// Every name once. (Which ops exist is the schema's to say: docs/ops.md's tables are
// generated from it and the test docs.op_table keeps them equal.)
TEST(OpRegistry, EveryNameOnce) {
  std::set<std::string> got;
  for (const OpDef* d : all_ops()) EXPECT_TRUE(got.insert(d->name).second) << "twice: " << d->name;
  EXPECT_GE(got.size(), 48u);
}

TEST(OpRegistry, FindOp) {
  const OpDef* conv = find_op("conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "conv2d");
  EXPECT_EQ(conv->family, "conv_pool");
  EXPECT_EQ(conv->input_index("w"), 1);
  EXPECT_EQ(find_op("conv3d"), nullptr);
  EXPECT_EQ(find_op(""), nullptr);
}

TEST(OpRegistry, AllOpsSortedByName) {
  const auto ops = all_ops();
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_LT(ops[i - 1]->name, ops[i]->name);
}

TEST(OpRegistry, DefinitionsAreConsistent) {
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    EXPECT_FALSE(d->doc.empty());
    EXPECT_NE(d->infer, nullptr);
    EXPECT_FALSE(d->outputs.empty());
    std::set<std::string> names;
    for (const InputSpec& in : d->inputs) {
      EXPECT_FALSE(in.dtypes.empty()) << in.name;
      EXPECT_TRUE(names.insert(in.name).second) << in.name;
    }
    std::set<std::string> attr_names;
    for (const AttrSpec& a : d->attrs) {
      EXPECT_TRUE(attr_names.insert(a.name).second) << a.name;
      EXPECT_EQ(a.required, !a.default_value.has_value()) << a.name;
      if (a.default_value) {
        EXPECT_EQ(a.default_value->type(), a.type) << a.name;
        EXPECT_TRUE(check_attr_value(d->name, a, *a.default_value).ok()) << a.name;
      }
    }
    for (const InPlace& p : d->in_place) {
      EXPECT_LT(p.output, static_cast<int>(d->outputs.size()));
      EXPECT_LT(p.input, static_cast<int>(d->inputs.size()));
    }
    EXPECT_NE(d->signature().find(d->name + "("), std::string::npos);
  }
}

TEST(OpRegistry, SignatureShowsInputsAndDefaults) {
  const std::string s = find_op("conv2d")->signature();
  EXPECT_NE(s.find("x: f32|f16|bf16 (N,H,W,Ci)"), std::string::npos) << s;
  EXPECT_NE(s.find("strides: ints = (1,1)"), std::string::npos) << s;
  EXPECT_NE(s.find("padding: string = \"VALID\""), std::string::npos) << s;
  EXPECT_NE(find_op("reshape")->signature().find("shape: ints (required)"), std::string::npos);
}

TEST(OpRegistry, DifferentiableFlags) {
  const OpDef* xent = find_op("sparse_softmax_cross_entropy");
  EXPECT_TRUE(xent->inputs[0].differentiable);   // logits
  EXPECT_FALSE(xent->inputs[1].differentiable);  // labels
  EXPECT_TRUE(find_op("conv2d")->inputs[1].differentiable);
  EXPECT_FALSE(find_op("gather_rows")->inputs[1].differentiable);  // indices
  for (const InputSpec& in : find_op("adam_update")->inputs) EXPECT_FALSE(in.differentiable);
}

}  // namespace
}  // namespace dlrt::ops
