// tests/conformance/cases_test.cc: checks of the case table and of the comparison, without
// any device: the table covers every op of the core's registry, every case is a valid call
// of its op (the registry instantiates it), the value generators keep their promises, and
// compare() judges as docs/ops.md says.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "case.hpp"
#include "compare.hpp"
#include "ops/op_instance.hpp"
#include "ops/op_registry.hpp"

namespace dlrt::conformance {
namespace {

// The registry's view of a case: input types and attributes, read through the same C
// structs the driver hands to dlrt_op_run.
ops::Result<ops::OpInstance> instantiate_case(const Case& c) {
  std::vector<ops::TensorType> inputs;
  for (const TensorSpec& t : c.inputs) inputs.push_back({t.dtype, t.dims});
  ops::AttrMap attrs;
  for (const Attr& a : c.attrs) {
    auto v = ops::attr_from_c(c.op, a.c());
    if (!v.ok()) return v.status();
    attrs.emplace(a.name, *v);
  }
  return ops::instantiate(c.op, inputs, attrs);
}

TEST(ConformanceCases, CoverEveryOpOfTheRegistry) {
  std::set<std::string> registry;
  for (const ops::OpDef* d : ops::all_ops()) {
    registry.insert(d->name);
    // Several shapes/attribute sets per op; a new op without cases fails here.
    EXPECT_GE(cases_for(d->name).size(), 3u)
        << "op '" << d->name << "' needs samples in its schema entry (core/ops/infer_" << d->family
        << ".cc)";
  }
  for (const Case& c : all_cases())
    EXPECT_TRUE(registry.count(c.op)) << "case of unknown op '" << c.op << "'";
}

TEST(ConformanceCases, EveryCaseIsAValidCallOfItsOp) {
  ASSERT_GT(all_cases().size(), 250u);
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op + ": " + c.describe());
    auto inst = instantiate_case(c);
    ASSERT_TRUE(inst.ok()) << inst.status().message();
    for (auto [o, i] : c.in_place) {
      ASSERT_LT(o, static_cast<int>(inst->outputs().size()));
      ASSERT_LT(i, static_cast<int>(c.inputs.size()));
      EXPECT_EQ(inst->output(o), inst->inputs()[i])
          << "in-place output " << o << " and input " << i;
    }
    // The driver reads every output into a host tensor: its dtype must have a conversion.
    for (const ops::TensorType& t : inst->outputs()) EXPECT_NO_THROW(HostTensor(t.dtype, t.dims));
  }
}

TEST(ConformanceCases, DescriptionsNameShapesAndAttributes) {
  const Case& c = *cases_for("conv2d").at(1);
  const std::string d = c.describe();
  EXPECT_NE(d.find("x f32(2,6,5,3)"), std::string::npos) << d;
  EXPECT_NE(d.find("padding=SAME"), std::string::npos) << d;
  EXPECT_NE(d.find("strides=(2,2)"), std::string::npos) << d;
}

// Every generator, on every case, many seeds: the properties the comparison relies on.
TEST(ConformanceCases, ValuesSuitTheirOps) {
  for (uint64_t seed : {1ull, 2ull, 12345ull}) {
    for (size_t k = 0; k < all_cases().size(); ++k) {
      const Case& c = all_cases()[k];
      if (!c.note.empty()) continue;  // edge cases break the rules on purpose
      SCOPED_TRACE(c.op + ": " + c.describe());
      Rng rng(case_seed(seed, c.op, k));
      const std::vector<HostTensor> in = c.make_inputs(rng);
      ASSERT_EQ(in.size(), c.inputs.size());
      for (const HostTensor& t : in)
        for (int64_t i = 0; i < t.size(); ++i) ASSERT_TRUE(std::isfinite(t.get(i)));
      if (c.op == "log" || c.op == "sqrt") {
        for (int64_t i = 0; i < in[0].size(); ++i) EXPECT_GE(in[0].get(i), 0);
      }
      if (c.op == "div") {
        for (int64_t i = 0; i < in[1].size(); ++i) EXPECT_GE(std::fabs(in[1].get(i)), 0.25);
      }
      if (c.op == "max_pool2d" || c.op == "argmax" || c.op == "reduce_max" ||
          c.op == "max_pool2d_backward" || c.op == "global_max_pool2d" ||
          c.op == "global_max_pool2d_backward") {
        std::set<double> seen;
        for (int64_t i = 0; i < in[0].size(); ++i) EXPECT_TRUE(seen.insert(in[0].get(i)).second);
      }
      if (c.op == "sparse_softmax_cross_entropy") {
        const int64_t classes = c.inputs[0].dims[1];
        for (int64_t i = 0; i < in[1].size(); ++i) {
          EXPECT_GE(in[1].get(i), 0);
          EXPECT_LT(in[1].get(i), classes);
        }
      }
      if (c.op == "gather_rows") {
        for (int64_t i = 0; i < in[1].size(); ++i) {
          EXPECT_GE(in[1].get(i), 0);
          EXPECT_LT(in[1].get(i), c.inputs[0].dims[0]);
        }
      }
      if (c.op == "gather" || c.op == "scatter_add") {  // ids in [0, R): bad ids are errors
        const bool g = c.op == "gather";
        const HostTensor& ids = g ? in[1] : in[0];
        int64_t rows = g ? c.inputs[0].dims[0] : 0;
        for (const Attr& a : c.attrs)
          if (a.name == "num_rows") rows = a.i;
        ASSERT_GT(rows, 0);
        for (int64_t i = 0; i < ids.size(); ++i) {
          EXPECT_GE(ids.get(i), 0);
          EXPECT_LT(ids.get(i), rows);
        }
      }
      if (c.op == "adam_update") {
        for (int64_t i = 0; i < in[3].size(); ++i) EXPECT_GE(in[3].get(i), 0);  // v
        EXPECT_GE(in[4].get(0), 1);                                             // step
        EXPECT_GT(in[5].get(0), 0);                                             // rate
      }
      if (c.op == "sgd_update") EXPECT_GT(in[3].get(0), 0);  // learning_rate
      if (c.op == "reduce_max_grad") {
        // y is the max of x: every y value occurs in x and none is below the values of x
        // that reduce to it (spot check: the global max of x is among the y values).
        double xmax = -INFINITY, ymax = -INFINITY;
        for (int64_t i = 0; i < in[0].size(); ++i) xmax = std::max(xmax, in[0].get(i));
        for (int64_t i = 0; i < in[1].size(); ++i) ymax = std::max(ymax, in[1].get(i));
        EXPECT_EQ(xmax, ymax);
      }
    }
  }
}

TEST(ConformanceCases, SeedsReplayAndDiffer) {
  EXPECT_EQ(case_seed(7, "conv2d", 0), case_seed(7, "conv2d", 0));
  EXPECT_NE(case_seed(7, "conv2d", 0), case_seed(7, "conv2d", 1));
  EXPECT_NE(case_seed(7, "conv2d", 0), case_seed(7, "matmul", 0));
  EXPECT_NE(case_seed(7, "conv2d", 0), case_seed(8, "conv2d", 0));
  const Case& c = *cases_for("matmul").at(0);
  Rng a(case_seed(3, "matmul", 0)), b(case_seed(3, "matmul", 0));
  EXPECT_EQ(c.make_inputs(a)[0].bytes, c.make_inputs(b)[0].bytes);
}

// The driver runs these in fresh contexts (the same run offset on both devices): the schema's
// list, not a copy in the driver that a new random op would miss.
TEST(ConformanceCases, RandomOpsComeFromTheSchema) {
  for (const char* op : {"random_uniform", "random_normal", "dropout", "multinomial"})
    EXPECT_TRUE(draws_random(op)) << op;
  for (const char* op : {"add", "top_k", "one_hot", "softmax"})
    EXPECT_FALSE(draws_random(op)) << op;
}

TEST(ConformanceCases, TolerancesFollowTheSpec) {
  EXPECT_TRUE(tolerance_for("argmax").exact);
  EXPECT_TRUE(tolerance_for("random_normal").exact);
  EXPECT_TRUE(tolerance_for("cast").exact);
  EXPECT_EQ(tolerance_for("add").rel, 1e-5);
  EXPECT_EQ(tolerance_for("adam_update").rel, 1e-5);
  EXPECT_EQ(tolerance_for("softmax").rel, 1e-4);
  EXPECT_EQ(tolerance_for("reduce_mean").rel, 1e-4);
  EXPECT_EQ(tolerance_for("conv2d_backward_filter").rel, 1e-3);
  EXPECT_EQ(tolerance_for("matmul_bias_act").rel, 1e-3);
  for (const char* moving : {"concat", "split", "slice", "slice_grad", "pad", "global_max_pool2d"})
    EXPECT_TRUE(tolerance_for(moving).exact) << moving;
  EXPECT_EQ(tolerance_for("pad_grad").rel, 1e-4);
  EXPECT_EQ(tolerance_for("global_avg_pool2d").rel, 1e-4);
  EXPECT_TRUE(tolerance_for("gather").exact);
  EXPECT_EQ(tolerance_for("scatter_add").rel, 1e-4);
}

HostTensor vec(std::vector<double> v, dlrt_dtype t = DLRT_F32) {
  HostTensor h(t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) h.set(static_cast<int64_t>(i), v[i]);
  return h;
}

TEST(ConformanceCompare, RelativeToScale) {
  const Tolerance tol{false, 1e-5};
  // Scale max(1, 100) = 100: an absolute error of 5e-4 is 5e-6 of scale.
  EXPECT_TRUE(compare(vec({100, 1, 2}), vec({100, 1.0005, 2}), tol).ok);
  const Comparison bad = compare(vec({100, 1, 2}), vec({100, 1, 2.01}), tol);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.where, 2);
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_NEAR(bad.max_error, 1e-4, 1e-6);
  EXPECT_NE(bad.text(vec({100, 1, 2}), tol).find("at [2]"), std::string::npos);
  // Small values: scale is 1, so the error is absolute.
  EXPECT_TRUE(compare(vec({1e-3}), vec({1e-3 + 5e-6}), tol).ok);
}

TEST(ConformanceCompare, NaNsAndInfinities) {
  const Tolerance tol{false, 1e-5};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  EXPECT_TRUE(compare(vec({nan, 1}), vec({nan, 1}), tol).ok);
  EXPECT_FALSE(compare(vec({nan, 1}), vec({0, 1}), tol).ok);
  EXPECT_FALSE(compare(vec({0, 1}), vec({nan, 1}), tol).ok) << "poison left in the output";
  EXPECT_TRUE(compare(vec({-inf, 1}), vec({-inf, 1}), tol).ok);
  EXPECT_FALSE(compare(vec({-inf, 1}), vec({inf, 1}), tol).ok);
  EXPECT_FALSE(compare(vec({1e30, 1}), vec({inf, 1}), tol).ok);
}

TEST(ConformanceCompare, ExactAndShapes) {
  const Tolerance exact{true, 0};
  EXPECT_TRUE(compare(vec({3, 1}, DLRT_I32), vec({3, 1}, DLRT_I32), exact).ok);
  EXPECT_FALSE(compare(vec({3, 1}, DLRT_I32), vec({3, 2}, DLRT_I32), exact).ok);
  EXPECT_FALSE(compare(vec({0.1f}), vec({std::nextafter(0.1f, 1.0f)}), exact).ok);
  const Comparison dims = compare(vec({1, 2}), vec({1, 2, 3}), exact);
  EXPECT_FALSE(dims.ok);
  EXPECT_NE(dims.problem.find("(3)"), std::string::npos) << dims.problem;
  EXPECT_FALSE(compare(vec({1, 2}, DLRT_I32), vec({1, 2}, DLRT_I64), exact).ok);
}

}  // namespace
}  // namespace dlrt::conformance

namespace dlrt::conformance {
namespace {

// The first f32 samples of ops whose float inputs admit f16/bf16 come again in each dtype,
// with the dtype's rounding added to the tolerance; ops that draw random numbers do not.
TEST(ConformanceCases, SixteenBitVariantsOfTheFloatOps) {
  auto count = [](const std::string& op, dlrt_dtype d) {
    int n = 0;
    for (const Case* c : cases_for(op)) {
      bool has = false;
      for (const TensorSpec& t : c->inputs) has = has || t.dtype == d;
      if (has && c->narrow_tolerance > 0) ++n;
    }
    return n;
  };
  for (const std::string op : {"conv2d", "conv2d_bias_act", "matmul", "relu", "add",
                               "batch_norm_train", "adam_update", "softmax", "layer_norm"}) {
    EXPECT_GE(count(op, DLRT_BF16), 1) << op;
    EXPECT_GE(count(op, DLRT_F16), 1) << op;
  }
  for (const std::string op : {"random_uniform", "dropout"}) {
    EXPECT_EQ(count(op, DLRT_BF16), 0) << op;
  }
  const Case* c = nullptr;
  for (const Case* k : cases_for("matmul"))
    if (k->narrow_tolerance > 0 && k->inputs[0].dtype == DLRT_BF16) c = k;
  ASSERT_NE(c, nullptr);
  EXPECT_GT(tolerance_for(*c).rel, tolerance_for("matmul").rel);
  // Rounded to 16 bits, random values would often land on kinks (hard_swish's 3, clip's
  // bounds); the variants move them off every multiple of 1/4.
  for (const Case* k : cases_for("hard_swish_grad")) {
    if (k->narrow_tolerance == 0) continue;
    for (uint64_t seed = 1; seed < 40; ++seed) {
      Rng rng(seed);
      for (const HostTensor& t : k->make_inputs(rng))
        for (int64_t i = 0; i < t.size(); ++i)
          ASSERT_NE(t.get(i) * 4, std::floor(t.get(i) * 4)) << k->describe() << " " << t.get(i);
    }
  }
}

}  // namespace
}  // namespace dlrt::conformance
