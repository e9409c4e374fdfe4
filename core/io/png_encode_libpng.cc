// io/png_encode_libpng.cc: encode_png_pixels (io/png_encode.hpp) with libpng's simplified
// write API (png_image_write_to_memory, libpng >= 1.6.29; Debian 12 ships 1.6.39).
#include <fmt/format.h>
#include <png.h>

#include "io/png_encode.hpp"
#include "status.hpp"

namespace dlrt::core::io {
namespace {

png_uint_32 png_format_for(int32_t channels) {
  switch (channels) {
    case 1:
      return PNG_FORMAT_GRAY;
    case 2:
      return PNG_FORMAT_GA;
    case 3:
      return PNG_FORMAT_RGB;
    default:
      return PNG_FORMAT_RGBA;
  }
}

}  // namespace

std::vector<uint8_t> encode_png_pixels(const uint8_t* pixels, int64_t height, int64_t width,
                                       int32_t channels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = png_format_for(channels);
  const png_int_32 row_stride = static_cast<png_int_32>(width * channels);

  // First call with no buffer: libpng says how many bytes the file needs (an upper bound),
  // then the second call writes them and sets `size` to the bytes actually written.
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, /*convert_to_8bit=*/0, pixels,
                                 row_stride, nullptr))
    throw Error(DLRT_INTERNAL, fmt::format("libpng could not size the PNG: {}", image.message));
  std::vector<uint8_t> bytes(size);
  if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, pixels, row_stride, nullptr))
    throw Error(DLRT_INTERNAL, fmt::format("libpng could not encode the PNG: {}", image.message));
  bytes.resize(size);
  png_image_free(&image);
  return bytes;
}

}  // namespace dlrt::core::io
