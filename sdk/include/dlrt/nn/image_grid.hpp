// dlrt/nn/image_grid.hpp: a batch of images saved as one PNG grid (generated samples,
// reconstructions), as torchvision's save_image(make_grid(...)) does (nn/image_grid.cc); the
// PNG itself is written by libdlrt (dlrt::write_png, libpng).
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

#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/image.hpp"
#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

struct ImageGridOptions {
  int64_t padding = 2;    // pixels between tiles and around the grid
  uint8_t pad_value = 0;  // their gray level
  float lo = 0.0f;        // f32 value written as 0
  float hi = 1.0f;        // f32 value written as 255
};

namespace detail {

uint8_t to_pixel(float v, float lo, float hi);

}  // namespace detail

// The grid's pixels (rows x cols x C bytes) without writing them; save_image_grid writes them.
// Throws dlrt::Error (INVALID_ARGUMENT) naming the argument: images not (N,H,W) or (N,H,W,C)
// with C 1 or 3, a dtype other than f32 / u8, columns < 1, padding < 0, hi <= lo.
struct ImageGrid {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

ImageGrid make_image_grid(const Array& images, int64_t columns, const ImageGridOptions& opt = {});

// Writes the grid of `images` to `path` as an 8-bit PNG (atomically: an old file survives an
// error). See the top of this file for the layout and value mapping.
void save_image_grid(const std::string& path, const Array& images, int64_t columns,
                     const ImageGridOptions& opt = {});

}  // namespace dlrt::nn

#endif  // DLRT_NN_IMAGE_GRID_HPP_
