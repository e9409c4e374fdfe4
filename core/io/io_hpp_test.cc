// io/io_hpp_test.cc: dlrt.hpp's IdxArray, SafeTensors and write_safetensors over the C API.
#include <dlrt/dlrt.hpp>

#include "io/io_test_util.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

TEST(IoHpp, ReadIdx) {
  TempDir dir;
  write_file(dir.file("a.gz"), gzip(idx_header(0x08, {2, 2}) + "\x01\x02\x03\x04"));
  dlrt::IdxArray a = dlrt::read_idx(dir.file("a.gz"));
  EXPECT_EQ(a.dtype(), DLRT_U8);
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.num_elements(), 4);
  ASSERT_EQ(a.bytes(), 4u);
  EXPECT_EQ(a.data<uint8_t>()[3], 4);
  dlrt::IdxArray moved = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(moved.data<uint8_t>()[0], 1);
  try {
    dlrt::read_idx(dir.file("none"));
    FAIL() << "a missing file was read";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
    EXPECT_THAT(e.message(), HasSubstr(dir.file("none")));
  }
}

TEST(IoHpp, SafeTensorsRoundTrip) {
  TempDir dir;
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> labels = {7, 8};
  const std::string path = dir.file("m.safetensors");
  dlrt::write_safetensors(path,
                          {{"w", DLRT_F32, {2, 3}, w.data(), w.size() * 4},
                           {"labels", DLRT_I32, {2}, labels.data(), 8}},
                          {{"step", "10"}, {"model", "mlp"}});
  dlrt::SafeTensors st = dlrt::SafeTensors::open(path);
  ASSERT_EQ(st.size(), 2u);
  std::vector<dlrt::SafeTensorView> all = st.entries();
  EXPECT_EQ(all[0].name, "w");
  EXPECT_EQ(all[1].name, "labels");
  EXPECT_EQ(all[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(static_cast<const float*>(all[0].data)[5], 6.0f);
  EXPECT_EQ(st.find("labels"), std::optional<size_t>(1));
  EXPECT_EQ(st.find("nope"), std::nullopt);
  EXPECT_EQ(static_cast<const int32_t*>(st.at("labels").data)[1], 8);
  EXPECT_THROW(st.at("nope"), dlrt::Error);
  EXPECT_EQ(st.metadata("step"), std::optional<std::string>("10"));
  EXPECT_EQ(st.metadata("none"), std::nullopt);
  EXPECT_EQ(st.metadata(),
            (std::vector<std::pair<std::string, std::string>>{{"step", "10"}, {"model", "mlp"}}));
  try {
    dlrt::write_safetensors(path, {{"w", DLRT_F32, {2, 3}, w.data(), 7}});
    FAIL() << "a wrong byte count was written";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_THAT(e.message(), HasSubstr("bytes is 7"));
  }
}

}  // namespace
}  // namespace dlrt::io_test
