// jpeg.cc: JPEG files and NumPy arrays, through libjpeg(-turbo)'s classic API, for
// dlrt.keras.utils.load_img / save_img (Keras reads and writes JPEG through PIL).
//
// libjpeg reports a fatal error by calling error_exit, which must not return. The only safe
// way out of C code is longjmp back to a setjmp in our frame, so decode() and encode() are
// written C-style: every object with a destructor (the output array, the file) lives in the
// caller's frame, and the setjmp frame holds only plain values. The error's text is kept in
// the error manager and becomes a dlrt::Error once we are back in C++.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

// jpeglib.h needs size_t and FILE declared before it.
#include <jpeglib.h>

#include "bindings.hpp"

namespace dlrt::python {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first, so libjpeg's j_common_ptr->err casts to this
  std::jmp_buf back;
  char message[JMSG_LENGTH_MAX];
};

void error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->back, 1);
}

// Warnings (a corrupt but readable stream) are not fatal: libjpeg fills what it cannot read.
void quiet(j_common_ptr) {}

struct File {
  std::FILE* f = nullptr;
  ~File() {
    if (f != nullptr) std::fclose(f);
  }
};

// Decodes `f` into `*pixels` (malloc'd; the caller frees it) as `channels` (1 or 3) per
// pixel. Returns false with err->message set on a fatal libjpeg error.
bool decode(std::FILE* f, int channels, ErrorManager* err, uint8_t** pixels, size_t* height,
            size_t* width) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = error_exit;
  err->pub.output_message = quiet;
  if (setjmp(err->back) != 0) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;  // CMYK/YCCK convert too
  jpeg_start_decompress(&cinfo);
  *height = cinfo.output_height;
  *width = cinfo.output_width;
  const size_t row = static_cast<size_t>(cinfo.output_width) * cinfo.output_components;
  *pixels = static_cast<uint8_t*>(std::malloc(row * cinfo.output_height));
  if (*pixels == nullptr) {
    std::snprintf(err->message, sizeof(err->message), "out of memory for %zu bytes",
                  row * cinfo.output_height);
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW rows[1] = {*pixels + row * cinfo.output_scanline};
    jpeg_read_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

// Encodes height x width pixels of `channels` (1 or 3) into `f` at `quality` (1..100).
bool encode(std::FILE* f, const uint8_t* pixels, size_t height, size_t width, int channels,
            int quality, ErrorManager* err) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = error_exit;
  err->pub.output_message = quiet;
  if (setjmp(err->back) != 0) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const size_t row = width * static_cast<size_t>(channels);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW rows[1] = {const_cast<uint8_t*>(pixels) + row * cinfo.next_scanline};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

}  // namespace

void bind_jpeg(nb::module_& m) {
  m.def(
      "jpeg_read",
      [](const std::string& path, int channels) {
        if (channels != 1 && channels != 3)
          throw dlrt::Error(DLRT_INVALID_ARGUMENT, "jpeg_read: channels is " +
                                                       std::to_string(channels) +
                                                       "; expected 1 (grey) or 3 (RGB)");
        File file;
        file.f = std::fopen(path.c_str(), "rb");
        if (file.f == nullptr)
          throw dlrt::Error(DLRT_NOT_FOUND, "jpeg_read: cannot open " + path);
        ErrorManager err{};
        uint8_t* pixels = nullptr;
        size_t h = 0, w = 0;
        bool ok = false;
        {
          nb::gil_scoped_release no_gil;
          ok = decode(file.f, channels, &err, &pixels, &h, &w);
        }
        if (!ok) {
          std::free(pixels);
          throw dlrt::Error(DLRT_INVALID_ARGUMENT, "jpeg_read: " + path +
                                                       " is not a JPEG file libjpeg can read (" +
                                                       err.message + ")");
        }
        nb::capsule owner(pixels, [](void* p) noexcept { std::free(p); });
        const size_t shape[3] = {h, w, static_cast<size_t>(channels)};
        return nb::ndarray<nb::numpy, uint8_t>(pixels, 3, shape, owner).cast();
      },
      nb::arg("path"), nb::arg("channels"),
      "A JPEG file's pixels as a new uint8 array (H, W, channels), channels 1 or 3.");
  m.def(
      "jpeg_write",
      [](const std::string& path, nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu> a,
         int quality) {
        const int channels = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
        if ((a.ndim() != 2 && a.ndim() != 3) || (channels != 1 && channels != 3))
          throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                            "jpeg_write: a JPEG image is (height, width) grey or (height, width, "
                            "3) RGB; got " + std::to_string(a.ndim()) + " dims with " +
                                std::to_string(channels) + " channels");
        if (quality < 1 || quality > 100)
          throw dlrt::Error(DLRT_INVALID_ARGUMENT, "jpeg_write: quality is " +
                                                       std::to_string(quality) +
                                                       "; expected 1 to 100");
        // Written beside the target and renamed over it, so a failure leaves no half file.
        const std::string partial = path + ".partial";
        File file;
        file.f = std::fopen(partial.c_str(), "wb");
        if (file.f == nullptr)
          throw dlrt::Error(DLRT_NOT_FOUND, "jpeg_write: cannot create " + partial);
        ErrorManager err{};
        bool ok = false;
        {
          nb::gil_scoped_release no_gil;
          ok = encode(file.f, a.data(), a.shape(0), a.shape(1), channels, quality, &err);
        }
        const bool closed = std::fclose(file.f) == 0;
        file.f = nullptr;
        if (!ok || !closed || std::rename(partial.c_str(), path.c_str()) != 0) {
          std::remove(partial.c_str());
          throw dlrt::Error(DLRT_INTERNAL, "jpeg_write: " + path + ": " +
                                               (ok ? "could not write the file" : err.message));
        }
      },
      nb::arg("path"), nb::arg("pixels"), nb::arg("quality"),
      "Writes uint8 pixels (H, W) or (H, W, 3) as a baseline JPEG file (atomically).");
}

}  // namespace dlrt::python
