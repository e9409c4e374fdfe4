// Every op of the registry has an example, and the example is a valid call of its op.
#include "op_examples.hpp"

#include <gtest/gtest.h>

#include "op_registry.hpp"

namespace dlrt::ops {
namespace {

TEST(OpExamples, EveryOpHasOneThatInstantiates) {
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    ASSERT_NE(find_example(d->name), nullptr)
        << d->name << " has no samples in its schema entry (OpDef::sampled)";
    Result<OpInstance> r = instantiate_example(d->name);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
  }
}

TEST(OpExamples, FloatOperandsAreF32) {
  for (const OpDef* d : all_ops()) {
    const OpExample* e = find_example(d->name);
    ASSERT_NE(e, nullptr);
    // Indices are i32 and where's cond is bool; every float operand is f32.
    for (const TensorType& t : e->inputs)
      EXPECT_TRUE(t.dtype == DLRT_F32 || t.dtype == DLRT_I32 || t.dtype == DLRT_BOOL)
          << d->name << ": " << to_string(t);
  }
}

TEST(OpExamples, UnknownOpIsNotFound) {
  EXPECT_EQ(find_example("conv3d"), nullptr);
  EXPECT_EQ(instantiate_example("conv3d").status().code(), DLRT_NOT_FOUND);
}

}  // namespace
}  // namespace dlrt::ops
