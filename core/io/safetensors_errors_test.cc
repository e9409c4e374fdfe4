// io/safetensors_errors_test.cc: every malformed header the reader refuses, each with its own
// message (asserted on its key words, and all distinct); the writer's argument checks; and the
// atomic write (no temp file left, an existing file untouched when a write fails).
#include <dlrt/dlrt.h>

#include <set>

#include "io/file_util.hpp"
#include "io/io_test_util.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

// A file: the 8-byte little-endian length of `json`, `json`, then `data`.
Bytes st_file(const std::string& json, const Bytes& data = "") {
  Bytes out;
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + json + data;
}

Result open_bytes(const TempDir& dir, const Bytes& bytes) {
  std::string path = dir.file("x.safetensors");
  write_file(path, bytes);
  dlrt_safetensors* st = nullptr;
  Result r = take(dlrt_safetensors_open(path.c_str(), &st));
  if (r.code == DLRT_OK) EXPECT_NE(st, nullptr);
  else EXPECT_EQ(st, nullptr);
  dlrt_safetensors_close(st);
  return r;
}

std::string t(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

TEST(SafetensorsOpen, EveryCorruptHeaderHasItsOwnError) {
  TempDir dir;
  const Bytes d16(16, '\0');
  struct Case {
    const char* what;
    Bytes file;
    dlrt_code code;
    const char* words;
  };
  const Case cases[] = {
      {"short file", Bytes("\x01\x02", 2), DLRT_DATA_LOSS, "8-byte little-endian header length"},
      {"length past the file", st_file("{}").substr(0, 9), DLRT_DATA_LOSS,
       "header length 2 is larger than the file: 1 bytes follow"},
      {"length over the limit", Bytes("\x00\xe1\xf5\x05\x01\0\0\0{}", 10), DLRT_DATA_LOSS,
       "larger than the 100000000-byte limit"},
      {"not JSON", st_file("{\"a\":"), DLRT_DATA_LOSS, "header is not JSON"},
      {"not an object", st_file("[1,2]"), DLRT_DATA_LOSS,
       "header is a JSON array, expected a JSON object"},
      {"tensor not an object", st_file("{\"a\":3}"), DLRT_DATA_LOSS,
       "tensor \"a\": expected an object"},
      {"missing field", st_file("{\"a\":{\"shape\":[],\"data_offsets\":[0,0]}}"), DLRT_DATA_LOSS,
       "missing field \"dtype\""},
      {"unknown field",
       st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1],"
               "\"x\":1}}",
               "z"),
       DLRT_DATA_LOSS, "unknown field \"x\""},
      {"unknown dtype", st_file("{\"a\":" + t("F33", "[1]", "[0,4]") + "}", "abcd"), DLRT_DATA_LOSS,
       "unknown dtype \"F33\""},
      {"dtype not a string",
       st_file("{\"a\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", "abcd"),
       DLRT_DATA_LOSS, "dtype is a JSON number"},
      {"unsupported dtype", st_file("{\"a\":" + t("F8_E4M3", "[2]", "[0,2]") + "}", "ab"),
       DLRT_UNIMPLEMENTED, "dtype F8_E4M3 is not supported by dlrt"},
      {"shape not a list", st_file("{\"a\":" + t("U8", "\"2\"", "[0,2]") + "}", "ab"),
       DLRT_DATA_LOSS, "shape is a JSON string"},
      {"negative dim", st_file("{\"a\":" + t("U8", "[1,-2]", "[0,2]") + "}", "ab"), DLRT_DATA_LOSS,
       "shape[1] is -2, expected a non-negative integer"},
      {"float dim", st_file("{\"a\":" + t("U8", "[1.5]", "[0,2]") + "}", "ab"), DLRT_DATA_LOSS,
       "shape[0] is 1.5"},
      {"rank 9", st_file("{\"a\":" + t("U8", "[1,1,1,1,1,1,1,1,1]", "[0,1]") + "}", "a"),
       DLRT_UNIMPLEMENTED, "shape has rank 9"},
      {"shape product overflow",
       st_file("{\"a\":" + t("I32", "[2,9223372036854775807]", "[0,16]") + "}", d16),
       DLRT_DATA_LOSS, "overflows: its element count × 4 bytes"},
      {"offsets not a pair", st_file("{\"a\":" + t("U8", "[2]", "[0]") + "}", "ab"), DLRT_DATA_LOSS,
       "data_offsets is [0], expected [begin, end]"},
      {"begin > end", st_file("{\"a\":" + t("U8", "[0]", "[2,0]") + "}", "ab"), DLRT_DATA_LOSS,
       "data_offsets [2, 0] has begin > end"},
      {"size mismatch", st_file("{\"a\":" + t("I32", "[2,2]", "[0,4]") + "}", "abcd"),
       DLRT_DATA_LOSS, "size != product × dtype size"},
      {"not from 0", st_file("{\"a\":" + t("U8", "[2]", "[2,4]") + "}", "abcd"), DLRT_DATA_LOSS,
       "the first tensor \"a\" starts at 2, expected 0"},
      {"gap",
       st_file("{\"a\":" + t("U8", "[2]", "[0,2]") + ",\"b\":" + t("U8", "[2]", "[3,5]") + "}",
               "abcde"),
       DLRT_DATA_LOSS, "gap: tensor \"b\" starts at 3 but \"a\" ends at 2"},
      {"overlap",
       st_file("{\"a\":" + t("U8", "[4]", "[0,4]") + ",\"b\":" + t("U8", "[2]", "[2,4]") + "}",
               "abcd"),
       DLRT_DATA_LOSS, "overlap: tensor \"b\" [2, 4) overlaps \"a\""},
      {"data past the end", st_file("{\"a\":" + t("I32", "[4]", "[0,16]") + "}", "abcdefgh"),
       DLRT_DATA_LOSS, "data past the end: tensor \"a\" ends at byte 16"},
      {"trailing bytes", st_file("{\"a\":" + t("U8", "[2]", "[0,2]") + "}", "abcd"), DLRT_DATA_LOSS,
       "2 trailing bytes after the last tensor"},
      {"duplicate name",
       st_file("{\"a\":" + t("U8", "[1]", "[0,1]") + ",\"a\":" + t("U8", "[1]", "[1,2]") + "}",
               "ab"),
       DLRT_DATA_LOSS, "duplicate key \"a\" (two tensors with the same name)"},
      {"metadata not a map", st_file("{\"__metadata__\":[\"a\"]}"), DLRT_DATA_LOSS,
       "__metadata__ is a JSON array, expected a string→string map"},
      {"metadata value not a string", st_file("{\"__metadata__\":{\"k\":1}}"), DLRT_DATA_LOSS,
       "__metadata__ is not a string→string map: the value of \"k\" is a JSON number"},
      {"too deep", st_file("{\"a\":{\"dtype\":[[[1]]]}}"), DLRT_DATA_LOSS,
       "nests deeper than 3 levels"},
  };
  std::set<std::string> messages;
  for (const Case& c : cases) {
    Result r = open_bytes(dir, c.file);
    EXPECT_EQ(r.code, c.code) << c.what << ": " << r.message;
    EXPECT_THAT(r.message, HasSubstr(c.words)) << c.what;
    EXPECT_THAT(r.message, HasSubstr(dir.file("x.safetensors"))) << c.what;
    EXPECT_TRUE(messages.insert(r.message).second) << c.what << " repeats a message";
  }
}

// Files the format's reference tests accept: an empty shape (a scalar), a zero-sized tensor,
// a header padded with JSON whitespace, metadata written by another writer.
TEST(SafetensorsOpen, AcceptsWhatTheReferenceAccepts) {
  TempDir dir;
  EXPECT_EQ(
      open_bytes(dir, st_file("{\"test\":" + t("I32", "[]", "[0,4]") + "}", Bytes(4, 0))).code,
      DLRT_OK);
  EXPECT_EQ(open_bytes(dir, st_file("{\"test\":" + t("I32", "[2,0]", "[0, 0]") + "}")).code,
            DLRT_OK);
  EXPECT_EQ(open_bytes(dir, st_file("{}\x0D\x20\x09\x0A")).code, DLRT_OK);
  // bindings/python/tests/test_simple.py, test_deserialization with metadata.
  EXPECT_EQ(open_bytes(dir, st_file("{\"__metadata__\":{\"framework\":\"pt\"},\"test1\":" +
                                        t("I32", "[2,2]", "[0,16]") + "}       ",
                                    Bytes(16, 0)))
                .code,
            DLRT_OK);
  Result missing = take(dlrt_safetensors_open(dir.file("none").c_str(), nullptr));
  EXPECT_EQ(missing.code, DLRT_INVALID_ARGUMENT);
  dlrt_safetensors* st = nullptr;
  missing = take(dlrt_safetensors_open(dir.file("none").c_str(), &st));
  EXPECT_EQ(missing.code, DLRT_NOT_FOUND);
  EXPECT_THAT(missing.message, HasSubstr(dir.file("none")));
}

dlrt_safetensors_entry u8_entry(const char* name, const uint8_t* data, size_t n) {
  dlrt_safetensors_entry e{};
  e.struct_size = sizeof(e);
  e.name = name;
  e.dtype = DLRT_U8;
  e.rank = 1;
  e.dims[0] = static_cast<int64_t>(n);
  e.data = data;
  e.bytes = n;
  return e;
}

Result write1(const std::string& path, const dlrt_safetensors_entry& a,
              const dlrt_safetensors_entry* b = nullptr) {
  const dlrt_safetensors_entry* p[2] = {&a, b};
  return take(dlrt_safetensors_write(path.c_str(), p, b ? 2 : 1, nullptr, nullptr, 0));
}

TEST(SafetensorsWrite, ArgumentErrorsNameTheEntry) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  const uint8_t data[4] = {1, 2, 3, 4};
  auto expect = [&](Result r, const char* words) {
    EXPECT_EQ(r.code, DLRT_INVALID_ARGUMENT) << r.message;
    EXPECT_THAT(r.message, HasSubstr(words));
  };
  dlrt_safetensors_entry a = u8_entry("a", data, 4);
  expect(write1(path, a, &a), "tensor 1 (\"a\"): the name is used by an earlier tensor");
  dlrt_safetensors_entry m = u8_entry("__metadata__", data, 4);
  expect(write1(path, m), "reserved");
  dlrt_safetensors_entry wrong = u8_entry("w", data, 4);
  wrong.bytes = 3;
  expect(write1(path, wrong), "bytes is 3, but dims (4) of U8 need 4 × 1");
  dlrt_safetensors_entry null = u8_entry("n", nullptr, 4);
  expect(write1(path, null), "data is NULL");
  dlrt_safetensors_entry neg = u8_entry("g", data, 4);
  neg.dims[0] = -4;
  expect(write1(path, neg), "dims[0] is -4");
  dlrt_safetensors_entry dt = u8_entry("d", data, 4);
  dt.dtype = 77;
  expect(write1(path, dt), "dtype 77 is not a dlrt dtype");
  dlrt_safetensors_entry utf = u8_entry("\xff\xfe", data, 4);
  expect(write1(path, utf), "not valid UTF-8");
  const char* keys[] = {"k", "k"};
  const char* values[] = {"1", "2"};
  const dlrt_safetensors_entry* p[] = {&a};
  expect(take(dlrt_safetensors_write(path.c_str(), p, 1, keys, values, 2)),
         "metadata key \"k\" is given twice");
  EXPECT_TRUE(dir.list().empty()) << "a failed write created a file";
}

TEST(SafetensorsWrite, AtomicNoTempFileAndOldFileKeptOnFailure) {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  const uint8_t v1[2] = {1, 1}, v2[3] = {2, 2, 2};
  ASSERT_EQ(write1(path, u8_entry("a", v1, 2)).code, DLRT_OK);
  const Bytes first = read_file(path);
  ASSERT_EQ(write1(path, u8_entry("a", v2, 3)).code, DLRT_OK);  // replaced
  EXPECT_NE(read_file(path), first);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"ckpt.safetensors"});
  const Bytes second = read_file(path);

  dlrt_safetensors_entry bad = u8_entry("a", v1, 2);
  bad.bytes = 5;
  EXPECT_EQ(write1(path, bad).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(read_file(path), second);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"ckpt.safetensors"});

  // A folder as the path: refused before anything is created.
  std::filesystem::create_directory(dir.file("sub"));
  Result folder = write1(dir.file("sub"), u8_entry("a", v1, 2));
  EXPECT_EQ(folder.code, DLRT_INVALID_ARGUMENT);
  EXPECT_THAT(folder.message, HasSubstr("it is a folder"));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"ckpt.safetensors", "sub"}));
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("sub")));

  Result nofolder = write1(dir.file("missing/ckpt"), u8_entry("a", v1, 2));
  EXPECT_EQ(nofolder.code, DLRT_NOT_FOUND);
  EXPECT_THAT(nofolder.message, HasSubstr(dir.file("missing")));
}

// A writer that fails between creating its temp file and committing (here: destroyed
// uncommitted, as an exception would) removes the temp file and leaves the target alone.
TEST(SafetensorsWrite, UncommittedWriterLeavesNothing) {
  TempDir dir;
  const std::string path = dir.file("keep");
  write_file(path, "old");
  {
    core::io::AtomicFileWriter w(path);
    w.write("new contents", 12);
    EXPECT_EQ(dir.list().size(), 2u);  // the target and the temp file
  }
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"keep"});
}

}  // namespace
}  // namespace dlrt::io_test
