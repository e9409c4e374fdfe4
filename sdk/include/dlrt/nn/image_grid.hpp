// dlrt/nn/image_grid.hpp: a batch of images saved as one PNG grid (generated samples,
// reconstructions), as torchvision's save_image(make_grid(...)) does. Header-only; the PNG
// itself is written by libdlrt (dlrt::write_png, libpng).
//
//   nn::Array fake = generator.predict(noise);        // (64, 28, 28, 1) f32 in [0, 1]
//   nn::save_image_grid("samples_epoch3.png", fake, 8);
//
// Layout: images are tiles of H x W, `columns` per row (ceil(N / columns) rows), each tile
// framed by `padding` pixels of `pad_value` (torchvision's defaults: 2 pixels of black), rows
// top first. f32 values map [lo, hi] (default [0, 1]) linearly onto 0..255, clamped, rounded
// to nearest; NaN becomes 0. u8 images are written as they are. C is 1 (gray) or 3 (RGB);
// (N, H, W) is read as C = 1.
#ifndef DLRT_NN_IMAGE_GRID_HPP_
#define DLRT_NN_IMAGE_GRID_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/image.hpp"
#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

struct ImageGridOptions {
  int64_t padding = 2;      // pixels between tiles and around the grid
  uint8_t pad_value = 0;    // their gray level
  float lo = 0.0f;          // f32 value written as 0
  float hi = 1.0f;          // f32 value written as 255
};

namespace detail {

inline uint8_t to_pixel(float v, float lo, float hi) {
  if (std::isnan(v)) return 0;
  const float t = (v - lo) / (hi - lo) * 255.0f;
  return static_cast<uint8_t>(std::lround(std::clamp(t, 0.0f, 255.0f)));
}

}  // namespace detail

// The grid's pixels (rows x cols x C bytes) without writing them; save_image_grid writes them.
// Throws dlrt::Error (INVALID_ARGUMENT) naming the argument: images not (N,H,W) or (N,H,W,C)
// with C 1 or 3, a dtype other than f32 / u8, columns < 1, padding < 0, hi <= lo.
struct ImageGrid {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

inline ImageGrid make_image_grid(const Array& images, int64_t columns,
                                 const ImageGridOptions& opt = {}) {
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
    throw Error(DLRT_INVALID_ARGUMENT, "save_image_grid: padding is " +
                                           std::to_string(opt.padding) + "; expected >= 0");
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
  const float* f = images.dtype() == DLRT_F32 ? reinterpret_cast<const float*>(images.data())
                                              : nullptr;
  const uint8_t* u = images.data();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t top = (i / cols) * (h + p) + p, left = (i % cols) * (w + p) + p;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) {
          const int64_t src = ((i * h + y) * w + x) * c + k;
          const int64_t dst = ((top + y) * g.width + left + x) * c + k;
          g.pixels[static_cast<size_t>(dst)] = f ? detail::to_pixel(f[src], opt.lo, opt.hi) : u[src];
        }
  }
  return g;
}

// Writes the grid of `images` to `path` as an 8-bit PNG (atomically: an old file survives an
// error). See the top of this file for the layout and value mapping.
inline void save_image_grid(const std::string& path, const Array& images, int64_t columns,
                            const ImageGridOptions& opt = {}) {
  const ImageGrid g = make_image_grid(images, columns, opt);
  write_png(path, g.pixels, g.height, g.width, static_cast<int32_t>(g.channels));
}

}  // namespace dlrt::nn

#endif  // DLRT_NN_IMAGE_GRID_HPP_
