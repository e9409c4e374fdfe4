// io/png_write.cc: PNG encoding with libpng's simplified write API (png_image_write_to_memory,
// libpng >= 1.6.29; Debian 12 ships 1.6.39).
#include "io/png_write.hpp"

#include <fmt/format.h>
#include <png.h>

#include "io/file_util.hpp"
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

std::vector<uint8_t> encode_png(const uint8_t* pixels, size_t num_bytes, int64_t height,
                                int64_t width, int32_t channels) {
  if (height < 1 || height > kPngMaxSide || width < 1 || width > kPngMaxSide)
    throw Error(DLRT_INVALID_ARGUMENT,
                fmt::format("PNG image of {}x{} (height x width): each side must be 1..{}",
                            height, width, kPngMaxSide));
  if (channels < 1 || channels > 4)
    throw Error(DLRT_INVALID_ARGUMENT,
                fmt::format("PNG image with {} channels: expected 1 (gray), 2 (gray+alpha), "
                            "3 (RGB) or 4 (RGBA)",
                            channels));
  // Both sides are <= 2^16 and channels <= 4, so this product cannot overflow.
  const size_t expected = static_cast<size_t>(height) * static_cast<size_t>(width) *
                          static_cast<size_t>(channels);
  if (pixels == nullptr || num_bytes != expected)
    throw Error(DLRT_INVALID_ARGUMENT,
                fmt::format("PNG image of {}x{}x{}: {} pixel bytes given, expected {}", height,
                            width, channels, pixels == nullptr ? 0 : num_bytes, expected));

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

void write_png(const std::string& path, const uint8_t* pixels, size_t num_bytes, int64_t height,
               int64_t width, int32_t channels) {
  const std::vector<uint8_t> bytes = encode_png(pixels, num_bytes, height, width, channels);
  AtomicFileWriter out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace dlrt::core::io
