// mixed_precision.cc: Keras' dtype policies (dlrt/nn/mixed_precision.hpp). The global policy
// lives here, once per process.
#include "dlrt/nn/mixed_precision.hpp"

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

}  // namespace dlrt::nn
