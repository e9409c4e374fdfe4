// io/png_write.hpp: 8-bit PNG files from host pixels (the images samples write: generated
// samples, reconstructions). libpng does the encoding (its "simplified" API, which reports
// errors in png_image.message instead of longjmp-ing through our frames); the file is
// written with AtomicFileWriter, so a failed write leaves any old file as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlrt::core::io {

// The largest width or height write_png accepts: past it a caller has almost certainly
// passed a wrong shape, and libpng's own default limit for readers is 1,000,000.
constexpr int64_t kPngMaxSide = 1 << 16;

// Encode `pixels` (height x width x channels bytes, row-major, channels 1 = gray, 2 =
// gray+alpha, 3 = RGB, 4 = RGBA) as PNG bytes. INVALID_ARGUMENT naming the bad argument
// (a side outside 1..kPngMaxSide, channels outside 1..4, a pixel count that does not match);
// INTERNAL with libpng's message if it fails.
std::vector<uint8_t> encode_png(const uint8_t* pixels, size_t num_bytes, int64_t height,
                                int64_t width, int32_t channels);

// encode_png, then write the bytes to `path` atomically (file_util.hpp's AtomicFileWriter).
void write_png(const std::string& path, const uint8_t* pixels, size_t num_bytes, int64_t height,
               int64_t width, int32_t channels);

}  // namespace dlrt::core::io
