// io/png_write_test.cc: PNG files written by dlrt_png_write decode with libpng to the same
// size and pixels; bad arguments are errors naming what was wrong, and a failed write leaves an
// existing file untouched. nn::save_image_grid's tests are in tests/nn/nn_image_grid_test.cc.
#include <png.h>

#include <dlrt/image.hpp>

#include "io/io_test_util.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

// A PNG decoded by libpng (its simplified read API) in the file's own channel count.
struct Decoded {
  uint32_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

Decoded decode(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&image, path.c_str())) << image.message;
  Decoded d;
  d.height = image.height;
  d.width = image.width;
  d.channels = PNG_IMAGE_PIXEL_CHANNELS(image.format);
  d.pixels.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, d.pixels.data(), 0, nullptr))
      << image.message;
  return d;
}

TEST(PngWrite, GrayAndRgbDecodeToTheSamePixels) {
  TempDir dir;
  for (int32_t channels : {1, 2, 3, 4}) {
    const int64_t h = 5, w = 7;
    std::vector<uint8_t> px(static_cast<size_t>(h * w * channels));
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 37 + 11);
    const std::string path = dir.file("c" + std::to_string(channels) + ".png");
    dlrt::write_png(path, px, h, w, channels);
    const Decoded d = decode(path);
    EXPECT_EQ(d.height, 5u);
    EXPECT_EQ(d.width, 7u);
    EXPECT_EQ(d.channels, static_cast<uint32_t>(channels));
    EXPECT_EQ(d.pixels, px) << channels << " channels";
  }
}

TEST(PngWrite, BadArgumentsNameWhatWasWrongAndKeepTheOldFile) {
  TempDir dir;
  const std::string path = dir.file("keep.png");
  write_file(path, "old contents");
  const std::vector<uint8_t> px(12, 0);
  auto expect_error = [&](int64_t h, int64_t w, int32_t c, const char* words) {
    try {
      dlrt::write_png(path, px, h, w, c);
      ADD_FAILURE() << "accepted " << h << "x" << w << "x" << c;
    } catch (const dlrt::Error& e) {
      EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
      EXPECT_THAT(e.message(), HasSubstr(words));
    }
    EXPECT_EQ(read_file(path), "old contents");
  };
  expect_error(0, 4, 3, "each side must be 1..65536");
  expect_error(4, 1 << 17, 3, "each side must be 1..65536");
  expect_error(2, 2, 5, "5 channels");
  expect_error(2, 2, 1, "12 pixel bytes given, expected 4");
  try {
    dlrt::write_png(dir.file("no/such/folder.png"), px, 2, 2, 3);
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
  }
  dlrt_status* null_pixels = dlrt_png_write(path.c_str(), nullptr, 0, 1, 1, 1);
  ASSERT_NE(null_pixels, nullptr);
  EXPECT_EQ(dlrt_status_code(null_pixels), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(null_pixels);
}

}  // namespace
}  // namespace dlrt::io_test
