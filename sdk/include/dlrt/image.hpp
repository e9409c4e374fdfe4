// dlrt/image.hpp: PNG files from host pixels (dlrt.h dlrt_png_write; libpng inside libdlrt).
//   std::vector<uint8_t> rgb(h * w * 3);
//   dlrt::write_png("out.png", rgb, h, w, 3);
#ifndef DLRT_IMAGE_HPP_
#define DLRT_IMAGE_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// `pixels`: height x width x channels bytes, rows top first; channels 1 (gray), 2 (gray +
// alpha), 3 (RGB) or 4 (RGBA). Written atomically; throws dlrt::Error naming the bad argument.
inline void write_png(const std::string& path, const std::vector<uint8_t>& pixels,
                      int64_t height, int64_t width, int32_t channels) {
  check(dlrt_png_write(path.c_str(), pixels.data(), pixels.size(), height, width, channels));
}

}  // namespace dlrt

#endif  // DLRT_IMAGE_HPP_
