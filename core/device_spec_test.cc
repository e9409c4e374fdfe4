// Unit tests of device_spec.cc and of the C wrappers dlrt_device_spec_parse/_format.
#include "device_spec.hpp"

#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <string>

#include "status.hpp"

namespace dlrt::core {
namespace {

// The message of the INVALID_ARGUMENT that parsing `text` throws ("" if it parses).
std::string parse_error(const std::string& text) {
  try {
    parse_device_spec(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT) << text;
    return e.message();
  }
  return "";
}

TEST(DeviceSpec, FullForm) {
  DeviceSpec s = parse_device_spec("/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_EQ(s.job, "localhost");
  EXPECT_EQ(s.replica, 0);
  EXPECT_EQ(s.task, 0);
  EXPECT_EQ(s.type, "GPU");
  EXPECT_EQ(s.index, 0);
  EXPECT_TRUE(s.is_local());
}

TEST(DeviceSpec, ShortForms) {
  for (const char* text : {"/GPU:0", "GPU:0", "gpu:0", "/device:GPU:0", "/device:gpu:0"}) {
    DeviceSpec s = parse_device_spec(text);
    EXPECT_EQ(s.type, "GPU") << text;
    EXPECT_EQ(s.index, 0) << text;
    EXPECT_TRUE(s.job.empty()) << text;
    EXPECT_EQ(s.replica, -1) << text;
  }
  DeviceSpec cpu = parse_device_spec("cpu");
  EXPECT_EQ(cpu.type, "CPU");
  EXPECT_EQ(cpu.index, -1);
  DeviceSpec gpu = parse_device_spec("GPU");
  EXPECT_EQ(gpu.type, "GPU");
  EXPECT_EQ(gpu.index, -1);
  EXPECT_EQ(parse_device_spec("/device:GPU:*").index, -1);
  EXPECT_EQ(parse_device_spec("REF:3").type, "REF");
  EXPECT_EQ(parse_device_spec("/device:ref:3").type, "REF");
  EXPECT_EQ(parse_device_spec("/job:worker/task:1").task, 1);
  EXPECT_FALSE(parse_device_spec("/job:worker/task:1").is_local());
}

TEST(DeviceSpec, BadSpecsNameThePartAndWhatWasExpected) {
  std::string e = parse_error("gpu:x");
  EXPECT_NE(e.find("'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("non-negative integer"), std::string::npos) << e;

  e = parse_error("/device:GPU:-1");
  EXPECT_NE(e.find("'-1'"), std::string::npos) << e;
  EXPECT_NE(e.find("non-negative integer"), std::string::npos) << e;

  e = parse_error("/foo:1");
  EXPECT_NE(e.find("'foo:1'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected job:<name>"), std::string::npos) << e;

  e = parse_error("");
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
  e = parse_error("/job:localhost//device:CPU:0");
  EXPECT_NE(e.find("empty part"), std::string::npos) << e;
  e = parse_error("/replica:x");
  EXPECT_NE(e.find("bad replica 'x'"), std::string::npos) << e;
  e = parse_error("/device:GPU:0/job:localhost");
  EXPECT_NE(e.find("out of order"), std::string::npos) << e;
  e = parse_error("/task:0/task:1");
  EXPECT_NE(e.find("repeats"), std::string::npos) << e;
  e = parse_error("/device:1GPU:0");
  EXPECT_NE(e.find("'1GPU'"), std::string::npos) << e;
  e = parse_error("/job:a b");
  EXPECT_NE(e.find("bad job name"), std::string::npos) << e;
  EXPECT_NE(parse_error("/"), "");
  EXPECT_NE(parse_error("GPU:99999999999"), "");
}

TEST(DeviceSpec, FormatFillsDefaults) {
  EXPECT_EQ(format_device_spec(parse_device_spec("GPU:1")),
            "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(format_device_spec(parse_device_spec("cpu")),
            "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(format_device_spec(parse_device_spec("/job:worker/replica:2/task:3/device:REF:4")),
            "/job:worker/replica:2/task:3/device:REF:4");
  EXPECT_EQ(format_device_spec(parse_device_spec("/job:worker")), "/job:worker/replica:0/task:0");
}

TEST(DeviceSpecCApi, ParseAndFormat) {
  dlrt_device_spec spec{};
  spec.struct_size = DLRT_STRUCT_SIZE(dlrt_device_spec);
  ASSERT_EQ(dlrt_device_spec_parse("/device:gpu:2", &spec), nullptr);
  EXPECT_STREQ(spec.type, "GPU");
  EXPECT_EQ(spec.index, 2);
  EXPECT_STREQ(spec.job, "");
  EXPECT_EQ(spec.replica, -1);

  char buf[128];
  size_t n = dlrt_device_spec_format(&spec, buf, sizeof buf);
  EXPECT_STREQ(buf, "/job:localhost/replica:0/task:0/device:GPU:2");
  EXPECT_EQ(n, std::string(buf).size());

  // Too small a buffer: truncated, NUL-terminated, and the needed length is returned.
  char small[8];
  EXPECT_EQ(dlrt_device_spec_format(&spec, small, sizeof small), n);
  EXPECT_STREQ(small, "/job:lo");
  EXPECT_EQ(dlrt_device_spec_format(&spec, nullptr, 0), n);

  dlrt_status* s = dlrt_device_spec_parse("gpu:x", &spec);
  EXPECT_EQ(dlrt_status_code(s), DLRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlrt_status_message(s)).find("gpu:x"), std::string::npos);
  dlrt_status_free(s);

  s = dlrt_device_spec_parse(nullptr, &spec);
  EXPECT_EQ(dlrt_status_code(s), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(s);
  s = dlrt_device_spec_parse("cpu", nullptr);
  EXPECT_EQ(dlrt_status_code(s), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(s);
}

TEST(StatusCApi, CreateCodeMessageFree) {
  EXPECT_EQ(dlrt_status_create(DLRT_OK, "fine"), nullptr);
  dlrt_status* s = dlrt_status_create(DLRT_NOT_FOUND, "no such thing");
  EXPECT_EQ(dlrt_status_code(s), DLRT_NOT_FOUND);
  EXPECT_STREQ(dlrt_status_message(s), "no such thing");
  dlrt_status_free(s);
  EXPECT_EQ(dlrt_status_code(nullptr), DLRT_OK);
  EXPECT_STREQ(dlrt_status_message(nullptr), "");
  dlrt_status_free(nullptr);
  EXPECT_STREQ(dlrt_code_name(DLRT_PERMISSION_DENIED), "PERMISSION_DENIED");
  EXPECT_STREQ(dlrt_code_name(static_cast<dlrt_code>(99)), "UNKNOWN_CODE");
}

}  // namespace
}  // namespace dlrt::core
