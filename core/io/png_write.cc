// io/png_write.cc: the checks of encode_png and the atomic write of write_png; the encoding
// itself is io/png_encode_libpng.cc (libpng) or io/png_encode_zlib.cc (zlib only, where there
// is no libpng: the Windows cross-build), behind io/png_encode.hpp.
#include "io/png_write.hpp"

#include <fmt/format.h>

#include "io/file_util.hpp"
#include "io/png_encode.hpp"
#include "status.hpp"

namespace dlrt::core::io {

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
  return encode_png_pixels(pixels, height, width, channels);
}

void write_png(const std::string& path, const uint8_t* pixels, size_t num_bytes, int64_t height,
               int64_t width, int32_t channels) {
  const std::vector<uint8_t> bytes = encode_png(pixels, num_bytes, height, width, channels);
  AtomicFileWriter out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace dlrt::core::io
