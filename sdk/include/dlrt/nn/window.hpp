// dlrt/nn/window.hpp: the geometry the sliding-window layers share (Conv2D, the poolings,
// DepthwiseConv2D, Conv2DTranspose, ...): (h, w) pairs, the output size of a window along one
// axis, and the checks of their settings, each naming the layer in its message.
#ifndef DLRT_NN_WINDOW_HPP_
#define DLRT_NN_WINDOW_HPP_

#include <array>
#include <cstdint>
#include <string>

namespace dlrt::nn {

using Size2 = std::array<int64_t, 2>;  // (h, w)

namespace detail {
// TensorFlow's output size along one axis (docs/ops.md): VALID floor((in-k')/s)+1, SAME
// ceil(in/s), k' = (k-1)*d+1 the dilated window. 0 or less means the window does not fit.
inline int64_t window_out(int64_t in, int64_t k, int64_t s, bool same, int64_t d = 1) {
  return same ? (in + s - 1) / s : (in - ((k - 1) * d + 1)) / s + 1;
}
bool check_padding(const std::string& p, const std::string& who);
void check_size2(const Size2& s, const std::string& what, const std::string& who);
// Keras refuses strides > 1 together with dilation_rate > 1 (its BaseConv).
void check_strides_dilation(const Size2& strides, const Size2& dilation, const std::string& who);
}  // namespace detail

}  // namespace dlrt::nn

#endif  // DLRT_NN_WINDOW_HPP_
