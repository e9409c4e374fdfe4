// io/io_limits_test.cc: what the readers refuse before reading, so a hostile file can neither
// hang a reader nor make it allocate what the file only claims to hold: a FIFO or other
// non-regular file is refused at once (never blocks in open), a sparse IDX file whose header
// claims 2^31 images fails fast with the size limit in the message, and dlrt_idx_read_rows
// reads only the rows it is asked for.
#include <dlrt/dlrt.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "io/io_test_util.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

struct Read {
  Result status;
  dlrt_idx_array array{};
  Read() { array.struct_size = DLRT_STRUCT_SIZE(dlrt_idx_array); }
  ~Read() { dlrt_idx_free(&array); }
};

// Runs `read` on another thread and fails (instead of hanging the suite) when it does not
// return within 5 s: the bug was an open() that never returned. On a timeout the FIFO gets a
// writer for a moment, which releases the blocked open, so the test ends either way.
template <typename F>
void within_5s(const std::string& fifo, F read) {
  auto done = std::async(std::launch::async, read);
  if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "the reader blocked on the FIFO " << fifo;
    int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  done.get();
}

TEST(IoLimits, FifoAsIdxFileIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string path = dir.file("images.idx");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  Read r;
  within_5s(path, [&] { r.status = take(dlrt_idx_read(path.c_str(), &r.array)); });
  EXPECT_EQ(r.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_THAT(r.status.message, HasSubstr(path));
  EXPECT_THAT(r.status.message, HasSubstr("FIFO"));
  EXPECT_THAT(r.status.message, HasSubstr("expected a regular file"));
}

TEST(IoLimits, FifoAsCheckpointIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  Result status;
  within_5s(path, [&] {
    dlrt_safetensors* handle = nullptr;
    status = take(dlrt_safetensors_open(path.c_str(), &handle));
    dlrt_safetensors_close(handle);
  });
  EXPECT_EQ(status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_THAT(status.message, HasSubstr(path));
  EXPECT_THAT(status.message, HasSubstr("not a regular file"));
}

TEST(IoLimits, CharacterDeviceIsRefused) {
  Read r;
  r.status = take(dlrt_idx_read("/dev/zero", &r.array));
  EXPECT_EQ(r.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_THAT(r.status.message, HasSubstr("'/dev/zero' is a character device"));
}

// A sparse file, as the probe made it: a header claiming 2^31 images of 28×28 and a file
// length that matches (1.7 TB, no blocks on disk).
std::string sparse_idx(const TempDir& dir) {
  const std::string path = dir.file("huge.idx");
  write_file(path, idx_header(0x08, {uint32_t{1} << 31, 28, 28}));
  const off_t size = 16 + (off_t{1} << 31) * 28 * 28;
  EXPECT_EQ(truncate(path.c_str(), size), 0) << "cannot make a sparse file of " << size;
  return path;
}

TEST(IoLimits, SparseFileClaimingTwoBillionImagesFailsFast) {
  TempDir dir;
  const std::string path = sparse_idx(dir);
  Read r;
  const auto start = std::chrono::steady_clock::now();
  r.status = take(dlrt_idx_read(path.c_str(), &r.array));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status.code, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.status.message, HasSubstr("2147483648×28×28 = 1683627180032 bytes"));
  EXPECT_THAT(r.status.message, HasSubstr("limit of 4294967296 bytes (DLRT_IDX_MAX_BYTES"));
  EXPECT_EQ(r.array.data, nullptr);
  EXPECT_LT(took, std::chrono::seconds(1));
}

TEST(IoLimits, RowLimitReadsOnlyWhatIsAskedFor) {
  TempDir dir;
  const std::string path = sparse_idx(dir);
  // 256 images are 200 KB; without the limit this file is refused (above), and before the
  // fix it was read whole (1.7 TB asked of malloc, 23 GB RSS in the probe).
  Read r;
  r.status = take(dlrt_idx_read_rows(path.c_str(), 256, &r.array));
  ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
  ASSERT_EQ(r.array.rank, 3);
  EXPECT_EQ(r.array.dims[0], 256);
  EXPECT_EQ(r.array.dims[1], 28);
  EXPECT_EQ(r.array.bytes, 256u * 28 * 28);
}

TEST(IoLimits, RowLimitKeepsTheFirstRowsAndStillChecksTheFileSize) {
  TempDir dir;
  const std::string path = dir.file("a.idx");
  write_file(path, idx_header(0x0C, {3}) + be32(7) + be32(8) + be32(9));
  {
    Read r;
    r.status = take(dlrt_idx_read_rows(path.c_str(), 2, &r.array));
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    ASSERT_EQ(r.array.dims[0], 2);
    ASSERT_EQ(r.array.bytes, 8u);
    EXPECT_EQ(static_cast<const int32_t*>(r.array.data)[1], 8);
  }
  {
    Read r;  // more rows than the file has: all of them
    r.status = take(dlrt_idx_read_rows(path.c_str(), 10, &r.array));
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dims[0], 3);
  }
  write_file(path, idx_header(0x0C, {3}) + be32(7) + be32(8));  // one row short
  Read r;
  r.status = take(dlrt_idx_read_rows(path.c_str(), 1, &r.array));
  EXPECT_EQ(r.status.code, DLRT_DATA_LOSS);
  EXPECT_THAT(r.status.message, HasSubstr("file has 8 after its 8-byte header"));
}

TEST(IoLimits, RowLimitOnAGzippedFile) {
  TempDir dir;
  const std::string path = dir.file("a.idx.gz");
  write_file(path, gzip(idx_header(0x08, {4, 2}) + Bytes("abcdefgh", 8)));
  Read r;
  r.status = take(dlrt_idx_read_rows(path.c_str(), 3, &r.array));
  ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
  EXPECT_EQ(r.array.dims[0], 3);
  ASSERT_EQ(r.array.bytes, 6u);
  EXPECT_EQ(static_cast<const char*>(r.array.data)[5], 'f');
}

}  // namespace
}  // namespace dlrt::io_test
