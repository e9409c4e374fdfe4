// image.cc: PNG files and NumPy arrays. Writing (dlrt.keras.utils.save_img) goes through
// libdlrt's writer (dlrt_png_write, libpng): the array's bytes as they are, uint8 (H, W) or
// (H, W, C), C of 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA); scaling floats to bytes is
// the Python side's (Keras' scale=True). Reading (keras.utils.load_img) is libpng's simplified
// API here in the extension: any PNG (palette, 16-bit, interlaced, ...) comes out as 8-bit
// grey, RGB or RGBA, as asked.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <dlrt/image.hpp>
#include <png.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace dlrt::python {

void bind_image(nb::module_& m) {
  m.def(
      "png_write",
      [](const std::string& path, nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu> a) {
        if (a.ndim() != 2 && a.ndim() != 3)
          throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                            "png_write: an image is (height, width) or (height, width, channels); "
                            "got " + std::to_string(a.ndim()) + " dims");
        const int64_t h = static_cast<int64_t>(a.shape(0)), w = static_cast<int64_t>(a.shape(1));
        const int32_t c = a.ndim() == 3 ? static_cast<int32_t>(a.shape(2)) : 1;
        std::vector<uint8_t> pixels(a.data(), a.data() + a.size());
        nb::gil_scoped_release no_gil;
        dlrt::write_png(path, pixels, h, w, c);
      },
      nb::arg("path"), nb::arg("pixels"),
      "Writes uint8 pixels (H, W) or (H, W, C), C in 1..4, as a PNG file (atomically).");
  m.def(
      "png_read",
      [](const std::string& path, int channels) {
        if (channels != 1 && channels != 3 && channels != 4)
          throw dlrt::Error(DLRT_INVALID_ARGUMENT, "png_read: channels is " +
                                                       std::to_string(channels) +
                                                       "; expected 1 (grey), 3 (RGB) or 4 (RGBA)");
        png_image image;
        std::memset(&image, 0, sizeof(image));
        image.version = PNG_IMAGE_VERSION;
        if (!png_image_begin_read_from_file(&image, path.c_str())) {
          // A file that opens but does not read is a bad file, not a missing one.
          std::FILE* f = std::fopen(path.c_str(), "rb");
          if (f == nullptr)
            throw dlrt::Error(DLRT_NOT_FOUND, "png_read: " + path + ": " + image.message);
          std::fclose(f);
          throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                            "png_read: " + path + " is not a PNG file libpng can read (" +
                                image.message + ")");
        }
        image.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB
                                                                        : PNG_FORMAT_RGBA;
        const size_t bytes = PNG_IMAGE_SIZE(image);
        std::unique_ptr<uint8_t[]> pixels(new uint8_t[bytes]);
        bool ok = false;
        {
          nb::gil_scoped_release no_gil;
          ok = png_image_finish_read(&image, nullptr, pixels.get(), 0, nullptr) != 0;
        }
        if (!ok) {
          const std::string why = image.message;
          png_image_free(&image);
          throw dlrt::Error(DLRT_INVALID_ARGUMENT, "png_read: " + path + ": " + why);
        }
        const size_t shape[3] = {image.height, image.width, static_cast<size_t>(channels)};
        uint8_t* data = pixels.release();
        nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
        return nb::ndarray<nb::numpy, uint8_t>(data, 3, shape, owner).cast();
      },
      nb::arg("path"), nb::arg("channels"),
      "A PNG file's pixels as a new uint8 array (H, W, channels), channels 1, 3 or 4.");
}

}  // namespace dlrt::python
