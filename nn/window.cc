// window.cc: the checks of a sliding-window layer's settings (dlrt/nn/window.hpp).
#include "dlrt/nn/window.hpp"

#include <algorithm>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

bool detail::check_padding(const std::string& p, const std::string& who) {
  if (p == "valid" || p == "VALID") return false;
  if (p == "same" || p == "SAME") return true;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": padding '" + p + "'; expected valid or same");
}

void detail::check_size2(const Size2& s, const std::string& what, const std::string& who) {
  if (s[0] < 1 || s[1] < 1) throw Error(DLRT_INVALID_ARGUMENT, who + ": " + what + " must be >= 1");
}

void detail::check_strides_dilation(const Size2& strides, const Size2& dilation,
                                    const std::string& who) {
  if (std::max(strides[0], strides[1]) > 1 && std::max(dilation[0], dilation[1]) > 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                who + ": strides > 1 are not supported together with dilation_rate > 1 (as Keras)");
}

}  // namespace dlrt::nn
