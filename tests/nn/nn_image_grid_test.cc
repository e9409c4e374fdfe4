// nn_image_grid_test.cc: nn::make_image_grid tiles a batch of images with padding and maps
// f32 values to pixels; nn::save_image_grid writes that grid as a PNG that decodes (libpng)
// to the same pixels; what it cannot draw is INVALID_ARGUMENT.
#include <png.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlrt/nn/image_grid.hpp"

namespace {

namespace nn = dlrt::nn;

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
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, d.pixels.data(), 0, nullptr)) << image.message;
  return d;
}

// A fresh folder under gtest's temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "dlrt_nn_grid_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST(ImageGrid, TilesImagesWithPaddingAndMapsValues) {
  // 5 gray 2x3 images, 3 columns: 2 rows of tiles, padding 1 of value 9.
  std::vector<float> v(5 * 2 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 6) / 5.0f;  // 0 .. 1
  v[0] = -3.0f;                                                                   // clamped to 0
  v[1] = 7.0f;                                                                    // clamped to 255
  const nn::Array images = nn::Array::of<float>({5, 2, 3, 1}, v);
  nn::ImageGridOptions opt;
  opt.padding = 1;
  opt.pad_value = 9;
  const nn::ImageGrid g = nn::make_image_grid(images, 3, opt);
  EXPECT_EQ(g.height, 2 * (2 + 1) + 1);
  EXPECT_EQ(g.width, 3 * (3 + 1) + 1);
  EXPECT_EQ(g.channels, 1);
  auto at = [&](int64_t y, int64_t x) { return g.pixels[static_cast<size_t>(y * g.width + x)]; };
  EXPECT_EQ(at(0, 0), 9);    // frame
  EXPECT_EQ(at(1, 1), 0);    // image 0, (0,0): -3 clamped
  EXPECT_EQ(at(1, 2), 255);  // image 0, (0,1): 7 clamped
  EXPECT_EQ(at(1, 3), 102);  // image 0, (0,2): 0.4 -> 102
  EXPECT_EQ(at(2, 3), 255);  // image 0, (1,2): 1.0
  EXPECT_EQ(at(1, 5), 0);    // image 1 starts at x = 1 + 4
  EXPECT_EQ(at(4, 1), 0);    // image 3 (row 2 of tiles) starts at y = 1 + 3
  EXPECT_EQ(at(4, 9), 9);    // the sixth tile is empty: frame colour
  TempDir dir;
  nn::save_image_grid(dir.file("grid.png"), images, 3, opt);
  const Decoded d = decode(dir.file("grid.png"));
  EXPECT_EQ(d.height, 7u);
  EXPECT_EQ(d.width, 13u);
  EXPECT_EQ(d.pixels, g.pixels);
}

TEST(ImageGrid, RejectsWhatItCannotDraw) {
  const nn::Array two_channels = nn::Array::of<float>({1, 2, 2, 2}, std::vector<float>(8));
  EXPECT_THROW(nn::make_image_grid(two_channels, 1), dlrt::Error);
  const nn::Array ints = nn::Array::of<int32_t>({1, 2, 2}, std::vector<int32_t>(4));
  EXPECT_THROW(nn::make_image_grid(ints, 1), dlrt::Error);
  const nn::Array ok = nn::Array::of<float>({1, 2, 2}, std::vector<float>(4));
  EXPECT_THROW(nn::make_image_grid(ok, 0), dlrt::Error);
  nn::ImageGridOptions empty_range;
  empty_range.hi = empty_range.lo;
  EXPECT_THROW(nn::make_image_grid(ok, 1, empty_range), dlrt::Error);
}

}  // namespace
