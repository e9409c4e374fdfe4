// convert_generators.cc: ONNX ops whose output is made from constants and shapes alone, so
// the importer computes it on the host (the window functions, EyeLike), and CenterCropPad, a slice and
// a pad whose amounts the target shape fixes at import.
//
//   HannWindow(size)      w[n] = sin^2(pi n / N)
//   HammingWindow(size)   w[n] = 25/46 - 21/46 cos(2 pi n / N)
//   BlackmanWindow(size)  w[n] = 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// with n = 0 .. size-1 and N = size (periodic, the default) or size - 1 (symmetric), as ONNX's
// reference (and torch.*_window) compute them: in double, rounded once to output_datatype.
#include <fmt/format.h>

#include <cmath>

#include "onnx_import/node_context.hpp"
#include "onnx_import/tensor_proto.hpp"

namespace dlrt::onnx_import {
namespace {

// The largest window made on the host (a constant of this many elements goes into the graph).
constexpr int64_t kMaxWindow = int64_t{1} << 24;

using WindowFn = double (*)(double n, double N);

void window(ConverterTable& t, const char* onnx_op, const char* formula, WindowFn fn) {
  t.add(onnx_op, std::string("host constant: ") + formula, [fn](NodeContext& c) {
    const std::vector<int64_t> size = c.require_host(0, "size").as_int64s();
    if (size.size() != 1)
      c.invalid(fmt::format("size must be a scalar; it has {} elements", size.size()));
    const int64_t n = size[0];
    if (n < 1 || n > kMaxWindow)
      c.unsupported(fmt::format("a window of size {} (dlrt makes windows of 1 to {} elements)", n,
                                kMaxWindow));
    const dlrt_dtype dtype = dtype_from_onnx(static_cast<int32_t>(c.attr_int("output_datatype", 1)),
                                             fmt::format("{} output_datatype", c.label()));
    const bool periodic = c.attr_int("periodic", 1) != 0;
    const double N = periodic ? double(n) : double(n - 1);
    std::vector<double> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = fn(double(i), N);
    c.set_host(0, HostTensor::from_doubles(dtype, w, {n}));
  });
}

// Crop and pad `axes` of x to `shape`, centred: a longer dim loses floor(d/2) elements at its
// start and the rest at its end, a shorter one gains zeros the same way (ONNX's reference).
void convert_center_crop_pad(NodeContext& c) {
  const int64_t r = c.rank(0);
  const std::vector<int64_t> shape = c.require_host(1, "shape").as_int64s();
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (axes.empty())
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  if (shape.size() != axes.size())
    c.invalid(fmt::format("shape has {} elements for {} axes", shape.size(), axes.size()));
  const std::vector<int64_t>& dims = c.dims(0);
  std::vector<int64_t> begin, end, cut_axes, pads(static_cast<size_t>(2 * r), 0);
  bool pad = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = c.axis(axes[k], r), dim = dims[static_cast<size_t>(a)], want = shape[k];
    if (want < 1)
      c.unsupported(fmt::format("a target length of {} (dlrt has no zero-sized tensors)", want));
    if (want < dim) {
      const int64_t start = (dim - want) / 2;
      cut_axes.push_back(a);
      begin.push_back(start);
      end.push_back(start + want);
    } else if (want > dim) {
      pads[static_cast<size_t>(a)] = (want - dim) / 2;
      pads[static_cast<size_t>(a + r)] = want - dim - (want - dim) / 2;
      pad = true;
    }
  }
  dlrt::Value y = c.value(0);
  if (!cut_axes.empty())
    y = c.op("slice", {y}, {{"begin", begin}, {"end", end}, {"axes", cut_axes}});
  if (pad) y = c.op("pad", {y}, {{"pads", pads}});
  if (cut_axes.empty() && !pad) y = c.op("copy", {y});
  c.set(0, y);
}

// EyeLike: ones on diagonal k (col - row = k) of a matrix of x's dims, zeros elsewhere; only
// x's dims are read, so the result is a host constant.
void convert_eye_like(NodeContext& c) {
  if (c.rank(0) != 2) c.invalid(fmt::format("the input has rank {}; EyeLike takes a matrix", c.rank(0)));
  const int64_t rows = c.dims(0)[0], cols = c.dims(0)[1], k = c.attr_int("k", 0);
  const dlrt_dtype dtype = c.has_attr("dtype")
                               ? dtype_from_onnx(static_cast<int32_t>(c.attr_int("dtype", 1)),
                                                 fmt::format("{} dtype", c.label()))
                               : c.dtype(0);
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols) v[static_cast<size_t>(r * cols + r + k)] = 1.0;
  c.set_host(0, HostTensor::from_doubles(dtype, v, {rows, cols}));
}

}  // namespace

void add_generator_converters(ConverterTable& t) {
  t.add("EyeLike", "host constant (ones on diagonal k)", convert_eye_like);
  window(t, "HannWindow", "sin^2(pi n / N)", [](double n, double N) {
    const double s = std::sin(M_PI * n / N);
    return s * s;
  });
  window(t, "HammingWindow", "25/46 - 21/46 cos(2 pi n / N)", [](double n, double N) {
    const double alpha = 25.0 / 46.0;
    return alpha - (1.0 - alpha) * std::cos(2.0 * M_PI * n / N);
  });
  window(t, "BlackmanWindow", "0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)",
         [](double n, double N) {
           return 0.42 - 0.5 * std::cos(2.0 * M_PI * n / N) + 0.08 * std::cos(4.0 * M_PI * n / N);
         });
  t.add("CenterCropPad", "slice, pad (amounts fixed at import)", convert_center_crop_pad);
}

}  // namespace dlrt::onnx_import
