// io/png_encode.hpp: the PNG encoder behind encode_png (io/png_write.hpp), one per build:
// io/png_encode_libpng.cc where libpng is found (Linux), io/png_encode_zlib.cc where only
// zlib is (the Windows cross-build). encode_png has checked the arguments already.
#pragma once

#include <cstdint>
#include <vector>

namespace dlrt::core::io {

// `pixels`: height x width x channels bytes (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA), row-major;
// sides 1..kPngMaxSide. INTERNAL with the encoder's message if it fails.
std::vector<uint8_t> encode_png_pixels(const uint8_t* pixels, int64_t height, int64_t width,
                                       int32_t channels);

}  // namespace dlrt::core::io
