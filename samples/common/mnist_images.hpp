// samples/common/mnist_images.hpp: Fashion-MNIST (MNIST's file layout) for the samples that
// feed host batches to a custom step (samples/vae, samples/dcgan, dlbench's vae): the file
// lookup, the images as f32, and the gather of a batch's rows. fit-based samples hand u8
// arrays to Model::fit instead (samples/mnist_cnn, samples/resnet).
#ifndef DLRT_SAMPLES_COMMON_MNIST_IMAGES_HPP_
#define DLRT_SAMPLES_COMMON_MNIST_IMAGES_HPP_

#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace samples {

// "<dir>/<name>", or "<dir>/<name>.gz" when only that exists; NOT_FOUND naming both.
inline std::string mnist_file(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(fs::path(dir) / n)) return (fs::path(dir) / n).string();
  throw dlrt::Error(DLRT_NOT_FOUND, "--data " + dir + ": no " + name + " or " + name +
                                        ".gz there (expected MNIST's file layout)");
}

// The u8 images (N, 28, 28) of an idx file as f32 (N, 28, 28, 1): pixel * scale + offset
// (1/255 and 0 for [0, 1]; 1/127.5 and -1 for a tanh generator's [-1, 1]). max_rows > 0
// reads only the first max_rows images (--limit).
inline dlrt::nn::Array mnist_images(const std::string& path, int64_t max_rows, float scale,
                                    float offset) {
  dlrt::IdxArray a = dlrt::read_idx(path, static_cast<uint64_t>(max_rows));
  std::vector<int64_t> dims = a.dims();
  if (a.dtype() != DLRT_U8 || dims.size() != 3 || dims[1] != 28 || dims[2] != 28)
    throw dlrt::Error(DLRT_INVALID_ARGUMENT, path + ": holds " + dlrt::dtype_name(a.dtype()) +
                                                 " of rank " + std::to_string(dims.size()) +
                                                 "; expected u8 images (N, 28, 28)");
  dims.push_back(1);
  const auto* p = static_cast<const uint8_t*>(a.data());
  std::vector<float> v(a.bytes());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(p[i]) * scale + offset;
  return dlrt::nn::Array::of<float>(dims, v);
}

// Rows order[first .. first + count) of `a`, as one array (count, sample...).
inline dlrt::nn::Array gather_rows(const dlrt::nn::Array& a, const std::vector<int32_t>& order,
                                   int64_t first, int64_t count) {
  const size_t rb = a.row_bytes();
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * rb);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + static_cast<size_t>(i) * rb,
                a.data() + static_cast<size_t>(order[static_cast<size_t>(first + i)]) * rb, rb);
  std::vector<int64_t> dims = a.dims();
  dims[0] = count;
  return dlrt::nn::Array(a.dtype(), dims, std::move(bytes));
}

}  // namespace samples

#endif  // DLRT_SAMPLES_COMMON_MNIST_IMAGES_HPP_
