// mixed_precision.cc: Keras' dtype policies (dlrt/nn/mixed_precision.hpp). The global policy
// lives here, once per process.
#include "dlrt/nn/mixed_precision.hpp"

#include <cstring>
#include <iostream>
#include <mutex>
#include <set>

#include "dlrt/error.hpp"

namespace dlrt::nn {

namespace {
// The policy of the layers made from now on; "float32" until set_global_policy changes it.
std::string& global_policy_name() {
  static std::string name = "float32";
  return name;
}
}  // namespace

dlrt_dtype policy_compute_dtype(const std::string& policy) {
  if (policy == "float32") return DLRT_F32;
  if (policy == "mixed_bfloat16") return DLRT_BF16;
  if (policy == "mixed_float16") return DLRT_F16;
  throw Error(DLRT_INVALID_ARGUMENT, "dtype policy '" + policy +
                                         "' is unknown; expected \"float32\", "
                                         "\"mixed_bfloat16\" or \"mixed_float16\"");
}

void set_global_policy(const std::string& policy) {
  policy_compute_dtype(policy);  // checks the name
  global_policy_name() = policy;
}

const std::string& global_policy() { return global_policy_name(); }

namespace detail {

std::string bf16_is_converted_on(const Context& ctx) {
  const size_t n = dlrt_context_device_count(ctx.get());
  int best_rank = 0;
  dlrt_device_info best{};
  for (size_t i = 0; i < n; ++i) {
    dlrt_device_info d{};
    d.struct_size = sizeof(d);
    if (dlrt_status* st = dlrt_context_device_info(ctx.get(), i, &d)) {
      dlrt_status_free(st);
      continue;
    }
    if (std::strcmp(d.plugin, "reference") == 0) continue;  // never chosen automatically
    const int rank = d.device_class == DLRT_DEVICE_CLASS_GPU     ? 3
                     : d.device_class == DLRT_DEVICE_CLASS_ACCEL ? 2
                     : d.device_class == DLRT_DEVICE_CLASS_CPU   ? 1
                                                                 : 0;
    if (rank > best_rank) best_rank = rank, best = d;
  }
  if (best_rank == 0) return "";
  std::string native;
  for (size_t a = 0; a < best.num_attrs; ++a)
    if (std::strcmp(best.attrs[a]->name, "native_dtypes") == 0 && best.attrs[a]->s != nullptr)
      native = best.attrs[a]->s;
  // A plugin that does not say is not second-guessed.
  if (native.empty() || ("," + native + ",").find(",bf16,") != std::string::npos) return "";
  return std::string(best.name) + " (" + best.model + ") has no native bf16 arithmetic (its "
         "native dtypes: " + native + "): its bf16 ops convert to f32 and back, so a "
         "mixed_bfloat16 model runs no faster than float32 there; the policy's bf16 numerics "
         "are kept. (A CPU computes bf16 natively with AVX512-BF16 or AMX.)";
}

void warn_once_if_bf16_is_converted(const Context& ctx) {
  const std::string why = bf16_is_converted_on(ctx);
  if (why.empty()) return;
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (!said.insert(why).second) return;
  std::cerr << "dlrt: mixed precision compatibility check (mixed_bfloat16): WARNING: " << why
            << "\n";
}

}  // namespace detail

}  // namespace dlrt::nn
