// sample_test.cc: the samples of the schema (sample.hpp): every op has several, each is a
// valid call of its op, and op_samples adds one for every behaviour-changing attribute value
// that an op's own samples leave out.
#include "sample.hpp"

#include <gtest/gtest.h>

#include "op_instance.hpp"
#include "op_registry.hpp"

namespace dlrt::ops {
namespace {

Result<OpInstance> instantiate_sample(const OpDef& def, const Sample& s) {
  std::vector<TensorType> inputs;
  for (const SampleInput& in : s.inputs) inputs.push_back({in.dtype, in.dims});
  return instantiate(def.name, inputs, s.attrs);
}

TEST(Samples, EveryOpHasSeveralThatAreValidCalls) {
  for (const OpDef* def : all_ops()) {
    SCOPED_TRACE(def->name);
    const std::vector<Sample> samples = op_samples(*def);
    EXPECT_GE(samples.size(), 3u) << "give the op's schema entry samples (OpDef::sampled)";
    for (const Sample& s : samples) {
      // A variadic last input (concat's x...) takes any count from its minimum on.
      if (def->variadic_inputs())
        ASSERT_GE(s.inputs.size(), def->inputs.size() - 1 + def->inputs.back().min_count);
      else ASSERT_EQ(s.inputs.size(), def->inputs.size());
      for (size_t i = 0; i < s.inputs.size(); ++i)
        EXPECT_EQ(s.inputs[i].name, def->input_spec(i).name);
      Result<OpInstance> r = instantiate_sample(*def, s);
      ASSERT_TRUE(r.ok()) << s.note << ": " << r.status().to_string();
      if (s.in_place) {
        ASSERT_FALSE(def->in_place.empty()) << "an in-place sample of an op without in-place pairs";
        for (InPlace p : def->in_place) EXPECT_EQ(r->output(p.output), r->inputs()[p.input]);
      }
    }
  }
}

// Every allowed string and both bools of every attribute appear in some sample.
TEST(Samples, CoverEveryBehaviourChangingAttributeValue) {
  for (const OpDef* def : all_ops())
    for (const AttrSpec& spec : def->attrs) {
      std::vector<AttrValue> values;
      for (const std::string& s : spec.allowed_strings) values.emplace_back(s);
      if (spec.type == DLRT_ATTR_BOOL) values = {AttrValue(false), AttrValue(true)};
      for (const AttrValue& v : values) {
        bool seen = false;
        for (const Sample& s : op_samples(*def)) {
          auto it = s.attrs.find(spec.name);
          seen |= it != s.attrs.end() ? it->second == v : *spec.default_value == v;
        }
        EXPECT_TRUE(seen) << def->name << ": no sample runs " << spec.name << " = " << to_string(v);
      }
    }
}

// A variation is made from the first sample when the op's own samples miss a value; values
// they already run are not repeated.
TEST(Samples, OpSamplesAddsTheMissingAttributeValues) {
  OpDef def = *find_op("relu");
  def.attrs.push_back(optional_attr("alpha", 0.5).try_values({0.5, 2.0, -1.0}));
  def.attrs.push_back(optional_attr("mode", "a").one_of({"a", "b"}));
  def.sampled([](const OpDef&) {
    std::vector<Sample> s(2);
    s[0].inputs = {f32_in("x", {3}, uniform(-1, 1))};
    s[1].inputs = {f32_in("x", {5}, uniform(-1, 1))};
    s[1].attrs.emplace("alpha", -1.0);
    return s;
  });
  const std::vector<Sample> out = op_samples(def);
  ASSERT_EQ(out.size(), 4u);  // + alpha 2 and mode "b"; alpha 0.5 is the default, -1 is there
  EXPECT_EQ(out[2].attrs.at("alpha"), AttrValue(2.0));
  EXPECT_EQ(out[2].inputs[0].dims, (Dims{3}));
  EXPECT_EQ(out[3].attrs.at("mode"), AttrValue("b"));
  EXPECT_EQ(out[3].note, "mode = \"b\"");
}

}  // namespace
}  // namespace dlrt::ops
