// distribute_test_util.hpp: helpers shared by the strategy tests (header-only, test code only):
// contexts on exactly the build tree's cpu and reference plugin files (never the folder, so a
// libdlrt-mpi.so built beside them is not loaded: these are single-process tests), an
// injected environment, replica tensors and their expected sums.
#pragma once

#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"
#include "distribute/strategy.hpp"
#include "status.hpp"
#include "tensor.hpp"

#ifndef DLRT_TEST_PLUGIN_DIR
#error "DLRT_TEST_PLUGIN_DIR (the build tree's plugin folder) must be defined by the build"
#endif

namespace dlrt::core::distribute::test {

using TensorPtr = std::unique_ptr<dlrt_tensor>;

inline std::string plugin_file(const char* name) {
  return std::string(DLRT_TEST_PLUGIN_DIR) + "/libdlrt-" + name + ".so";
}

// A stand-in for getenv: only `vars` are set.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

struct ContextSpec {
  int cpu_split = 1;         // logical devices CPU:0 is split into (1: no split)
  std::string visible = "";  // "" = all
  std::string plugin_options = "";
  std::vector<std::string> extra_plugin_paths;  // e.g. a missing libdlrt-mpi.so
  std::map<std::string, std::string> env;       // the context's environment
};

// A context on the cpu and reference plugin files of this build tree.
inline std::unique_ptr<dlrt_context> make_context(const ContextSpec& spec) {
  const std::string cpu = plugin_file("cpu"), ref = plugin_file("reference");
  std::vector<const char*> paths = {cpu.c_str(), ref.c_str()};
  for (const std::string& p : spec.extra_plugin_paths) paths.push_back(p.c_str());
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.plugin_paths = paths.data();
  o.num_plugin_paths = paths.size();
  o.search_default_paths = 0;
  o.visible_devices = spec.visible.c_str();
  o.plugin_options = spec.plugin_options.c_str();
  dlrt_logical_device_config split{};
  split.struct_size = sizeof(split);
  split.physical_device = "CPU:0";
  split.count = spec.cpu_split;
  if (spec.cpu_split > 1) {
    o.logical_devices = &split;
    o.num_logical_devices = 1;
  }
  FakeEnv env{spec.env};
  return std::make_unique<dlrt_context>(&o, env.lookup());
}

// n CPU logical devices (host path) or n REF devices (the reference plugin's collectives:
// device path), nothing else visible.
inline std::unique_ptr<dlrt_context> cpu_context(int n) {
  ContextSpec s;
  s.cpu_split = n;
  s.visible = "CPU";
  return make_context(s);
}
inline std::unique_ptr<dlrt_context> ref_context(int n, const std::string& more_options = "") {
  ContextSpec s;
  s.visible = "REF";
  s.plugin_options = "reference:num_devices=" + std::to_string(n) + more_options;
  return make_context(s);
}

template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

inline TensorPtr f32_tensor(Context& ctx, size_t device, std::vector<int64_t> dims,
                            const std::vector<float>& values) {
  auto t = std::make_unique<dlrt_tensor>(ctx, device, ops::TensorType{DLRT_F32, std::move(dims)});
  t->write(values.data(), values.size() * sizeof(float));
  return t;
}

inline std::vector<float> read_f32(const dlrt_tensor& t) {
  std::vector<float> v(t.byte_size() / sizeof(float));
  t.read(v.data(), t.byte_size());
  return v;
}

// Replica tensors for a strategy: `shapes` per replica, values depending on replica, tensor
// and element (some fractional, some large, so the order of the sum shows in the bits).
struct Replicas {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<TensorPtr> owned;    // replica-major
  std::vector<dlrt_tensor*> ptrs;  // what the calls take

  static float value(size_t r, size_t k, size_t i) {
    const float big = (i % 3 == 0) ? 1e7f * static_cast<float>(r % 2 == 0 ? 1 : -1) : 0.0f;
    return big + 0.1f * static_cast<float>(r + 1) + static_cast<float>(k) * 10.0f +
           static_cast<float>(i) * 0.37f;
  }
  static size_t count(const std::vector<int64_t>& dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }

  Replicas(Strategy& s, std::vector<std::vector<int64_t>> shapes_in)
      : shapes(std::move(shapes_in)) {
    for (size_t r = 0; r < s.num_replicas(); ++r)
      for (size_t k = 0; k < shapes.size(); ++k) {
        std::vector<float> v(count(shapes[k]));
        for (size_t i = 0; i < v.size(); ++i) v[i] = value(r, k, i);
        owned.push_back(f32_tensor(s.context(), s.replica_device(r), shapes[k], v));
        ptrs.push_back(owned.back().get());
      }
  }
  size_t per_replica() const { return shapes.size(); }
  dlrt_tensor& at(size_t r, size_t k) { return *owned[r * shapes.size() + k]; }

  // The sum over `replicas` replicas in replica order, in f32: what every replica must hold.
  std::vector<float> expected_sum(size_t replicas, size_t k) const {
    std::vector<float> sum(count(shapes[k]));
    for (size_t i = 0; i < sum.size(); ++i) {
      float acc = value(0, k, i);
      for (size_t r = 1; r < replicas; ++r) acc += value(r, k, i);
      sum[i] = acc;
    }
    return sum;
  }
};

// Bitwise equality of float vectors (EXPECT_EQ on floats would call -0 == 0 equal).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace dlrt::core::distribute::test
