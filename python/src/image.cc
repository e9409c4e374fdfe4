// image.cc: PNG files from NumPy arrays (dlrt.keras.utils.save_img), through libdlrt's writer
// (dlrt_png_write, libpng): the array's bytes as they are, uint8 (H, W) or (H, W, C), C of
// 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA). Scaling floats to bytes is the Python
// side's (Keras' scale=True).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <dlrt/image.hpp>

#include <cstdint>
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
}

}  // namespace dlrt::python
