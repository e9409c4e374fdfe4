// image_grid.cc: image grids of a batch of images, saved as PNG (dlrt/nn/image_grid.hpp).
#include "dlrt/nn/image_grid.hpp"

#include <algorithm>
#include <cmath>

namespace dlrt::nn {

uint8_t detail::to_pixel(float v, float lo, float hi) {
  if (std::isnan(v)) return 0;
  const float t = (v - lo) / (hi - lo) * 255.0f;
  return static_cast<uint8_t>(std::lround(std::clamp(t, 0.0f, 255.0f)));
}

ImageGrid make_image_grid(const Array& images, int64_t columns, const ImageGridOptions& opt) {
  const Shape& d = images.dims();
  if (d.size() != 3 && d.size() != 4)
    throw Error(DLRT_INVALID_ARGUMENT, "save_image_grid: images of shape " + dims_string(d) +
                                           "; expected (N, H, W) or (N, H, W, C)");
  const int64_t n = d[0], h = d[1], w = d[2], c = d.size() == 4 ? d[3] : 1;
  if (c != 1 && c != 3)
    throw Error(DLRT_INVALID_ARGUMENT, "save_image_grid: " + std::to_string(c) +
                                           " channels; expected 1 (gray) or 3 (RGB)");
  if (images.dtype() != DLRT_F32 && images.dtype() != DLRT_U8)
    throw Error(DLRT_INVALID_ARGUMENT, "save_image_grid: images of dtype " +
                                           dtype_name(images.dtype()) + "; expected f32 or u8");
  if (columns < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "save_image_grid: columns is " + std::to_string(columns) + "; expected >= 1");
  if (opt.padding < 0)
    throw Error(DLRT_INVALID_ARGUMENT,
                "save_image_grid: padding is " + std::to_string(opt.padding) + "; expected >= 0");
  if (!(opt.hi > opt.lo))
    throw Error(DLRT_INVALID_ARGUMENT, "save_image_grid: the value range [" +
                                           std::to_string(opt.lo) + ", " + std::to_string(opt.hi) +
                                           "] is empty; expected lo < hi");
  const int64_t cols = std::min(columns, n);
  const int64_t rows = (n + cols - 1) / cols;
  const int64_t p = opt.padding;
  ImageGrid g;
  g.height = rows * (h + p) + p;
  g.width = cols * (w + p) + p;
  g.channels = c;
  g.pixels.assign(static_cast<size_t>(g.height * g.width * c), opt.pad_value);
  const float* f =
      images.dtype() == DLRT_F32 ? reinterpret_cast<const float*>(images.data()) : nullptr;
  const uint8_t* u = images.data();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t top = (i / cols) * (h + p) + p, left = (i % cols) * (w + p) + p;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) {
          const int64_t src = ((i * h + y) * w + x) * c + k;
          const int64_t dst = ((top + y) * g.width + left + x) * c + k;
          g.pixels[static_cast<size_t>(dst)] =
              f ? detail::to_pixel(f[src], opt.lo, opt.hi) : u[src];
        }
  }
  return g;
}

void save_image_grid(const std::string& path, const Array& images, int64_t columns,
                     const ImageGridOptions& opt) {
  const ImageGrid g = make_image_grid(images, columns, opt);
  write_png(path, g.pixels, g.height, g.width, static_cast<int32_t>(g.channels));
}

}  // namespace dlrt::nn
