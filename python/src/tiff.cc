// tiff.cc: TIFF files as NumPy arrays, through libtiff, for dlrt.keras.utils.load_img.
//
// TIFF is the format of microscopy and of annotation masks: 16-bit grey images and integer
// labels that a conversion to 8 bits would destroy. So unlike PNG and JPEG (always uint8),
// a TIFF comes back with its own sample type: uint8, uint16, uint32, int8/16/32 or float32,
// shape (H, W, samples), the first image of the file. Strips and tiles, every compression
// libtiff decodes, interleaved samples (PLANARCONFIG_CONTIG); planar-separate files are
// refused by name.
//
// libtiff reports errors through a process-wide handler that prints to stderr; ours keeps the
// last message of this thread instead, so it can travel in the exception.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bindings.hpp"

namespace dlrt::python {
namespace {

thread_local std::string last_tiff_error;

void keep_error(const char* module, const char* fmt, va_list ap) {
  char text[512];
  std::vsnprintf(text, sizeof(text), fmt, ap);
  last_tiff_error = (module != nullptr ? std::string(module) + ": " : std::string()) + text;
}

void ignore_warning(const char*, const char*, va_list) {}

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
using TiffFile = std::unique_ptr<TIFF, TiffCloser>;

// The NumPy dtype of (bits, sample format), or none.
nb::dlpack::dtype sample_dtype(uint16_t bits, uint16_t format, bool* ok) {
  *ok = true;
  const uint8_t b = static_cast<uint8_t>(bits);
  if (format == SAMPLEFORMAT_UINT && (bits == 8 || bits == 16 || bits == 32))
    return {static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), b, 1};
  if (format == SAMPLEFORMAT_INT && (bits == 8 || bits == 16 || bits == 32))
    return {static_cast<uint8_t>(nb::dlpack::dtype_code::Int), b, 1};
  if (format == SAMPLEFORMAT_IEEEFP && bits == 32)
    return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), b, 1};
  *ok = false;
  return {};
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw dlrt::Error(DLRT_INVALID_ARGUMENT, "tiff_read: " + path + ": " + why);
}

}  // namespace

void bind_tiff(nb::module_& m) {
  m.def(
      "tiff_read",
      [](const std::string& path) {
        TIFFSetErrorHandler(keep_error);
        TIFFSetWarningHandler(ignore_warning);
        if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
          std::fclose(f);
        } else {
          throw dlrt::Error(DLRT_NOT_FOUND, "tiff_read: cannot open " + path);
        }
        last_tiff_error.clear();
        TiffFile tif(TIFFOpen(path.c_str(), "r"));
        if (!tif) refuse(path, "not a TIFF file libtiff can read (" + last_tiff_error + ")");

        uint32_t width = 0, height = 0;
        uint16_t bits = 1, samples = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
        TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width);
        TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bits);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &format);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &planar);
        bool known = false;
        const nb::dlpack::dtype dtype = sample_dtype(bits, format, &known);
        if (!known)
          refuse(path, std::to_string(bits) + "-bit samples of format " + std::to_string(format) +
                           "; expected 8, 16 or 32-bit integers or 32-bit floats");
        if (planar != PLANARCONFIG_CONTIG)
          refuse(path, "samples stored plane by plane (PLANARCONFIG_SEPARATE) are not read");
        if (width == 0 || height == 0) refuse(path, "an image of no pixels");

        const size_t pixel = static_cast<size_t>(samples) * (bits / 8);
        const size_t row = static_cast<size_t>(width) * pixel;
        auto* data = static_cast<uint8_t*>(std::malloc(row * height));
        if (data == nullptr) refuse(path, "out of memory for the pixels");
        nb::capsule owner(data, [](void* p) noexcept { std::free(p); });

        bool ok = true;
        {
          nb::gil_scoped_release no_gil;
          if (TIFFIsTiled(tif.get())) {
            // Each tile is tw x th pixels, clipped at the right and bottom edges.
            uint32_t tw = 0, th = 0;
            TIFFGetField(tif.get(), TIFFTAG_TILEWIDTH, &tw);
            TIFFGetField(tif.get(), TIFFTAG_TILELENGTH, &th);
            std::unique_ptr<uint8_t[]> tile(new uint8_t[TIFFTileSize(tif.get())]);
            for (uint32_t y = 0; ok && y < height; y += th)
              for (uint32_t x = 0; ok && x < width; x += tw) {
                ok = TIFFReadTile(tif.get(), tile.get(), x, y, 0, 0) >= 0;
                const uint32_t w = std::min(tw, width - x), h = std::min(th, height - y);
                for (uint32_t r = 0; ok && r < h; ++r)
                  std::memcpy(data + (y + r) * row + x * pixel, tile.get() + r * tw * pixel,
                              w * pixel);
              }
          } else {
            for (uint32_t y = 0; ok && y < height; ++y)
              ok = TIFFReadScanline(tif.get(), data + y * row, y, 0) >= 0;
          }
        }
        if (!ok) refuse(path, "the pixels do not decode (" + last_tiff_error + ")");
        const size_t shape[3] = {height, width, samples};
        return nb::ndarray<nb::numpy>(data, 3, shape, owner, nullptr, dtype).cast();
      },
      nb::arg("path"),
      "The first image of a TIFF file as a new array (H, W, samples) of its own sample type "
      "(uint8/16/32, int8/16/32 or float32).");
}

}  // namespace dlrt::python
