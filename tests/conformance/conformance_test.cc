// tests/conformance/conformance_test.cc: the conformance driver. Every op of docs/ops.md,
// on every loaded device that is not the reference, against the reference device — the
// model is ggml's test-backend-ops.
//
// One context with the default plugin search (the build tree's plugins: cpu, reference,
// null, cuda where built). For each device under test and each op, one test named
// `Conformance/<op>.<plugin>_<n>` (e.g. Conformance/conv2d.cpu_0) runs every case of the op
// (case.hpp): the same host data goes to both devices; the device's outputs are poisoned
// (0xFF bytes: NaN for every float type, -1 for ints) before the run, so an element it never
// writes shows up; both run through dlrt_op_run; the outputs are read back and compared with
// the op's tolerance (compare.hpp).
//
// A device that declines a case (dlrt_op_supported: UNIMPLEMENTED) skips it with its reason,
// except that the oneDNN CPU device must run every required (f32) case. Devices that run no
// op at all are not tested. What it is not: a performance test, or a test of graphs.
//
// DLRT_CONFORMANCE_SEED fixes the run's seed (every failure message prints it); otherwise
// it is fresh each run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "case.hpp"
#include "compare.hpp"
#include "driver.hpp"

namespace dlrt::conformance {
namespace {

struct Device {
  size_t index = 0;
  std::string name;      // "/device:CPU:0"
  std::string platform;  // "onednn"
  std::string label;     // "cpu_0": plugin name and ordinal, as test names show it
};

// What main() sets up once for every test.
struct DriverState {
  ContextPtr context;
  std::string context_error;
  bool have_reference = false;
  Device reference;
  std::vector<Device> tested;
  std::vector<std::string> not_tested;  // "null_0: runs no op"
  uint64_t seed = 0;
  bool seed_from_env = false;
};
DriverState& state() {
  static DriverState s;
  return s;
}

std::string seed_text() {
  return std::to_string(state().seed) +
         " (replay: DLRT_CONFORMANCE_SEED=" + std::to_string(state().seed) + ")";
}

// ---- one op on two devices -----------------------------------------------------------------

// The C views of one case's attributes and input descriptors.
struct CallArgs {
  std::vector<dlrt_attr> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
  std::vector<dlrt_tensor_desc> descs;
  std::vector<const dlrt_tensor_desc*> desc_ptrs;

  explicit CallArgs(const Case& c, const std::vector<HostTensor>& inputs) {
    for (const Attr& a : c.attrs) attrs.push_back(a.c());
    for (const dlrt_attr& a : attrs) attr_ptrs.push_back(&a);
    for (const HostTensor& t : inputs) descs.push_back(t.desc());
    for (const dlrt_tensor_desc& d : descs) desc_ptrs.push_back(&d);
  }
};

HostTensor host_of(const dlrt_tensor_desc& d) {
  return HostTensor(static_cast<dlrt_dtype>(d.dtype), Dims(d.dims, d.dims + d.rank));
}

std::string desc_text(const dlrt_tensor_desc& d) {
  return std::string(dtype_name(static_cast<dlrt_dtype>(d.dtype))) +
         format_dims(Dims(d.dims, d.dims + d.rank));
}

// The result of running one case on one device: outputs in host memory, or why not.
struct DeviceRun {
  std::string error;  // empty on success
  std::vector<HostTensor> outputs;
};

// Creates the inputs on `device`, runs the op and reads the outputs back.
//   poison: outputs are created by the caller and filled with 0xFF bytes first; otherwise
//           dlrt_op_run creates them (NULL slots), which exercises that path on the oracle.
//   in_place: (output, input) pairs whose output is written into the input tensor.
DeviceRun run_on(dlrt_context* ctx, const Device& device, const Case& c,
                 const std::vector<HostTensor>& inputs,
                 const std::vector<dlrt_tensor_desc>& out_descs, bool poison,
                 const std::vector<std::pair<int, int>>& in_place) {
  DeviceRun run;
  CallArgs args(c, inputs);
  std::vector<TensorPtr> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx, device.index, &args.descs[i], &t));
    in[i].reset(t);
    if (!s) s.reset(dlrt_tensor_write(t, inputs[i].bytes.data(), inputs[i].bytes.size()));
    if (s) {
      run.error =
          "input " + std::to_string(i) + " (" + c.inputs[i].name + "): " + status_text(s.get());
      return run;
    }
  }
  std::vector<TensorPtr> owned(out_descs.size());
  std::vector<dlrt_tensor*> out(out_descs.size(), nullptr);
  for (size_t o = 0; o < out_descs.size(); ++o) {
    auto alias = std::find_if(in_place.begin(), in_place.end(), [&](const std::pair<int, int>& p) {
      return p.first == static_cast<int>(o);
    });
    if (alias != in_place.end()) {
      out[o] = in[alias->second].get();
      continue;
    }
    if (!poison) continue;
    dlrt_tensor* t = nullptr;
    StatusPtr s(dlrt_tensor_create(ctx, device.index, &out_descs[o], &t));
    owned[o].reset(t);
    if (!s) {
      const std::vector<uint8_t> ff(dlrt_tensor_byte_size(t), 0xFF);
      s.reset(dlrt_tensor_write(t, ff.data(), ff.size()));
    }
    if (s) {
      run.error = "poisoned output " + std::to_string(o) + ": " + status_text(s.get());
      return run;
    }
    out[o] = t;
  }
  std::vector<const dlrt_tensor*> in_ptrs;
  for (const TensorPtr& t : in) in_ptrs.push_back(t.get());
  StatusPtr s(dlrt_op_run(ctx, c.op.c_str(), device.index, in_ptrs.data(), in_ptrs.size(),
                          args.attr_ptrs.data(), args.attr_ptrs.size(), out.data(), out.size()));
  // Take ownership of what the run created (NULL slots it filled).
  for (size_t o = 0; o < out.size(); ++o)
    if (out[o] != nullptr && !owned[o] &&
        std::none_of(in.begin(), in.end(), [&](const TensorPtr& t) { return t.get() == out[o]; }))
      owned[o].reset(out[o]);
  if (s) {
    run.error = "dlrt_op_run: " + status_text(s.get());
    return run;
  }
  for (size_t o = 0; o < out.size(); ++o) {
    if (out[o] == nullptr) {
      run.error = "dlrt_op_run left output " + std::to_string(o) + " NULL";
      return run;
    }
    dlrt_tensor_desc got{};
    got.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    StatusPtr ds(dlrt_tensor_get_desc(out[o], &got));
    if (ds || got.dtype != out_descs[o].dtype || got.rank != out_descs[o].rank ||
        !std::equal(got.dims, got.dims + got.rank, out_descs[o].dims)) {
      run.error = "output " + std::to_string(o) + " is " +
                  (ds ? status_text(ds.get()) : desc_text(got)) + ", dlrt_op_infer said " +
                  desc_text(out_descs[o]);
      return run;
    }
    HostTensor h = host_of(out_descs[o]);
    StatusPtr rs(dlrt_tensor_read(out[o], h.bytes.data(), h.bytes.size()));
    if (rs) {
      run.error = "reading output " + std::to_string(o) + ": " + status_text(rs.get());
      return run;
    }
    run.outputs.push_back(std::move(h));
  }
  return run;
}

// A context made as the shared one is (default options), with `device`'s index in it.
std::string fresh_context(ContextPtr& out, Device& device) {
  dlrt_context* c = nullptr;
  StatusPtr s(dlrt_context_create(nullptr, &c));
  out.reset(c);
  if (!s) s.reset(dlrt_context_find_device(c, device.name.c_str(), &device.index));
  return s ? "a fresh context for " + device.name + ": " + status_text(s.get()) : "";
}

class OpOnDevice : public ::testing::Test {
 public:
  OpOnDevice(std::string op, Device device) : op_(std::move(op)), device_(std::move(device)) {}

  void TestBody() override {
    const DriverState& env = state();
    ASSERT_TRUE(env.have_reference) << "no reference device";
    const std::vector<const Case*> cases = cases_for(op_);
    ASSERT_FALSE(cases.empty()) << "op '" << op_ << "' has no conformance cases: give its schema "
                                << "entry samples (core/ops, OpDef::sampled)";
    const bool must_support = device_.platform == "onednn";
    std::vector<std::string> skipped;
    size_t ran = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& c = *cases[k];
      const std::string where = op_ + " on " + device_.name + " (" + device_.label + "), case " +
                                std::to_string(k) + ": " + c.describe() + "; seed " + seed_text();
      const Tolerance tol = tolerance_for(c);
      Rng rng(case_seed(env.seed, op_, k));
      const std::vector<HostTensor> inputs = c.make_inputs(rng);
      CallArgs args(c, inputs);
      dlrt_context* ctx = env.context.get();

      StatusPtr ref_ok(dlrt_op_supported(ctx, op_.c_str(), env.reference.index,
                                         args.desc_ptrs.data(), args.desc_ptrs.size(),
                                         args.attr_ptrs.data(), args.attr_ptrs.size()));
      if (ref_ok) {
        ADD_FAILURE() << where
                      << "\nthe reference device declines the case: " << status_text(ref_ok.get());
        continue;
      }
      StatusPtr dev_ok(dlrt_op_supported(ctx, op_.c_str(), device_.index, args.desc_ptrs.data(),
                                         args.desc_ptrs.size(), args.attr_ptrs.data(),
                                         args.attr_ptrs.size()));
      if (dev_ok) {
        const bool unimplemented = dlrt_status_code(dev_ok.get()) == DLRT_UNIMPLEMENTED;
        if (!unimplemented || (must_support && c.required)) {
          ADD_FAILURE() << where << "\n"
                        << device_.name << " declines the case"
                        << (unimplemented ? " (the CPU device must run every required case: f32, "
                                            "and f16/bf16 through f32)"
                                          : "")
                        << ": " << status_text(dev_ok.get());
        } else {
          skipped.push_back("case " + std::to_string(k) + " (" + c.describe() +
                            "): " + status_text(dev_ok.get()));
        }
        continue;
      }

      dlrt_tensor_desc outs[8];
      for (dlrt_tensor_desc& d : outs) {
        d = dlrt_tensor_desc{};
        d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
      }
      size_t num_outputs = 0;
      StatusPtr inf(dlrt_op_infer(ctx, op_.c_str(), args.desc_ptrs.data(), args.desc_ptrs.size(),
                                  args.attr_ptrs.data(), args.attr_ptrs.size(), outs, 8,
                                  &num_outputs));
      if (inf) {
        ADD_FAILURE() << where << "\ndlrt_op_infer: " << status_text(inf.get());
        continue;
      }
      const std::vector<dlrt_tensor_desc> out_descs(outs, outs + num_outputs);

      // Random ops draw with an offset the context advances on every dlrt_op_run (dlrt.h), so
      // the two runs must each be the first run of a fresh context to draw the same numbers.
      ContextPtr ref_ctx, dev_ctx;
      Device ref_dev = env.reference, dev = device_;
      if (draws_random(op_)) {
        std::string err = fresh_context(ref_ctx, ref_dev);
        if (err.empty()) err = fresh_context(dev_ctx, dev);
        if (!err.empty()) {
          ADD_FAILURE() << where << "\n" << err;
          continue;
        }
      }
      const DeviceRun ref = run_on(ref_ctx ? ref_ctx.get() : ctx, ref_dev, c, inputs, out_descs,
                                   /*poison=*/false, {});
      if (!ref.error.empty()) {
        ADD_FAILURE() << where << "\nreference run failed: " << ref.error;
        continue;
      }
      const DeviceRun got = run_on(dev_ctx ? dev_ctx.get() : ctx, dev, c, inputs, out_descs,
                                   /*poison=*/true, c.in_place);
      if (!got.error.empty()) {
        ADD_FAILURE() << where << "\n" << device_.name << " run failed: " << got.error;
        continue;
      }
      ++ran;
      for (size_t o = 0; o < out_descs.size(); ++o) {
        const Comparison cmp = compare(ref.outputs[o], got.outputs[o], tol);
        EXPECT_TRUE(cmp.ok) << where << "\noutput " << o << " " << desc_text(out_descs[o]) << ": "
                            << cmp.text(ref.outputs[o], tol);
      }
    }
    if (!skipped.empty()) {
      std::string reasons;
      for (const std::string& s : skipped) reasons += "\n  " + s;
      if (ran == 0) GTEST_SKIP() << device_.name << " runs no case of " << op_ << ":" << reasons;
      std::cout << "[   INFO   ] " << device_.label << " skipped " << skipped.size() << " of "
                << cases.size() << " cases of " << op_ << ":" << reasons << "\n";
    }
  }

 private:
  std::string op_;
  Device device_;
};

// ---- setup and registration ----------------------------------------------------------------

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// Does `index` run any op at all? (The registry's example operands, as dlprobe --ops asks.)
bool runs_any_op(dlrt_context* ctx, size_t index) {
  for (size_t i = 0; i < dlrt_op_count(); ++i) {
    StatusPtr s(dlrt_op_probe(ctx, dlrt_op_name(i), index));
    if (!s) return true;
  }
  return false;
}

void init_setup() {
  DriverState& env = state();
  if (const char* s = std::getenv("DLRT_CONFORMANCE_SEED"); s != nullptr && *s != '\0') {
    env.seed = std::strtoull(s, nullptr, 0);
    env.seed_from_env = true;
  } else {
    env.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }
  dlrt_context* ctx = nullptr;
  StatusPtr s(dlrt_context_create(nullptr, &ctx));
  env.context.reset(ctx);
  if (s) {
    env.context_error = status_text(s.get());
    return;
  }
  std::map<std::string, int> label_uses;
  for (size_t i = 0; i < dlrt_context_device_count(ctx); ++i) {
    dlrt_device_info info{};
    info.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
    StatusPtr is(dlrt_context_device_info(ctx, i, &info));
    if (is) continue;
    Device d;
    d.index = i;
    d.name = info.name;
    d.platform = info.platform;
    std::string label = sanitize(std::string(*info.plugin ? info.plugin : info.platform) + "_" +
                                 std::to_string(info.plugin_ordinal));
    if (info.logical_count > 1) label += "_" + std::to_string(info.logical_index);
    if (label_uses[label]++ > 0) label += "_" + std::to_string(label_uses[label] - 1);
    d.label = label;
    if (d.platform == "reference" && !env.have_reference) {
      env.reference = d;
      env.have_reference = true;
      continue;
    }
    if (!runs_any_op(ctx, i)) {
      env.not_tested.push_back(d.label + " (" + d.name + "): runs no op");
      continue;
    }
    env.tested.push_back(d);
  }
}

void register_tests() {
  const DriverState& env = state();
  // The ops the core knows; an op without cases still gets its tests, which then fail.
  std::vector<std::string> ops;
  for (size_t i = 0; i < dlrt_op_count(); ++i) ops.push_back(dlrt_op_name(i));
  for (const Device& d : env.tested)
    for (const std::string& op : ops)
      ::testing::RegisterTest(("Conformance/" + op).c_str(), d.label.c_str(), nullptr,
                              d.name.c_str(), __FILE__, __LINE__,
                              [op, d]() -> ::testing::Test* { return new OpOnDevice(op, d); });
}

// The setup itself: a context, a reference device, and what is tested.
TEST(ConformanceSetup, ReferenceDeviceAndDevicesUnderTest) {
  const DriverState& env = state();
  ASSERT_TRUE(env.context_error.empty()) << "dlrt_context_create: " << env.context_error;
  ASSERT_TRUE(env.have_reference)
      << "no device of platform \"reference\": is libdlrt-reference.so built next to libdlrt?";
  std::cout << "[   INFO   ] seed " << seed_text()
            << "\n[   INFO   ] reference: " << env.reference.name << "\n";
  for (const Device& d : env.tested)
    std::cout << "[   INFO   ] under test: " << d.label << " " << d.name << " (" << d.platform
              << ")\n";
  for (const std::string& n : env.not_tested) std::cout << "[   INFO   ] not tested: " << n << "\n";
}

TEST(ConformanceSetup, TheCoreKnowsEveryOpOfTheTable) {
  std::set<std::string> core;
  for (size_t i = 0; i < dlrt_op_count(); ++i) core.insert(dlrt_op_name(i));
  for (const Case& c : all_cases()) EXPECT_TRUE(core.count(c.op)) << c.op;
  EXPECT_EQ(dlrt_op_name(dlrt_op_count()), nullptr);
}

}  // namespace

// For bad_input_test.cc: the seed-independent context of this binary is not shared; those
// tests make their own (two reference devices).

}  // namespace dlrt::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dlrt::conformance::init_setup();
  dlrt::conformance::register_tests();
  const int rc = RUN_ALL_TESTS();
  dlrt::conformance::state().context.reset();
  return rc;
}
