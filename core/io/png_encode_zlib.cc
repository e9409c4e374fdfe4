// io/png_encode_zlib.cc: encode_png_pixels (io/png_encode.hpp) with zlib alone, for builds
// without libpng (the Windows cross-build: Debian has no mingw libpng). PNG is a signature and
// chunks (length, type, data, CRC-32 of type and data); an 8-bit image needs three of them:
//   IHDR  width, height, bit depth 8, colour type (0 gray, 4 gray+alpha, 2 RGB, 6 RGBA),
//         compression 0, filter method 0, no interlace;
//   IDAT  the zlib stream of the rows, each prefixed by its filter type (0: none, which every
//         decoder reads; libpng picks smarter filters and so writes smaller files);
//   IEND  empty.
// (The PNG specification, sections 5 and 11; zlib's compress2 and crc32.)
#include <zlib.h>

#include <fmt/format.h>

#include "io/png_encode.hpp"
#include "status.hpp"

namespace dlrt::core::io {
namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {  // PNG integers are big-endian
  out.push_back(static_cast<uint8_t>(v >> 24));
  out.push_back(static_cast<uint8_t>(v >> 16));
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put_chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  // The CRC covers the type and the data, not the length.
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), out.data() + start,
                          static_cast<uInt>(out.size() - start));
  put_u32(out, static_cast<uint32_t>(crc));
}

uint8_t colour_type(int32_t channels) {
  switch (channels) {
    case 1:
      return 0;  // gray
    case 2:
      return 4;  // gray + alpha
    case 3:
      return 2;  // RGB
    default:
      return 6;  // RGBA
  }
}

}  // namespace

std::vector<uint8_t> encode_png_pixels(const uint8_t* pixels, int64_t height, int64_t width,
                                       int32_t channels) {
  const size_t row = static_cast<size_t>(width) * static_cast<size_t>(channels);
  std::vector<uint8_t> raw;
  raw.reserve((row + 1) * static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter type 0 (none)
    const uint8_t* r = pixels + static_cast<size_t>(y) * row;
    raw.insert(raw.end(), r, r + row);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  const int rc = compress2(packed.data(), &packed_size, raw.data(),
                           static_cast<uLong>(raw.size()), Z_DEFAULT_COMPRESSION);
  if (rc != Z_OK)
    throw Error(DLRT_INTERNAL, fmt::format("zlib could not compress the PNG's pixels: {} "
                                           "(compress2 returned {})",
                                           zError(rc), rc));
  packed.resize(packed_size);

  std::vector<uint8_t> ihdr;
  put_u32(ihdr, static_cast<uint32_t>(width));
  put_u32(ihdr, static_cast<uint32_t>(height));
  ihdr.insert(ihdr.end(), {8, colour_type(channels), 0, 0, 0});

  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  put_chunk(out, "IHDR", ihdr);
  put_chunk(out, "IDAT", packed);
  put_chunk(out, "IEND", {});
  return out;
}

}  // namespace dlrt::core::io
