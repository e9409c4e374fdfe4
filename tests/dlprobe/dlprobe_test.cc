// dlprobe_test.cc: runs the built dlprobe as a user would (popen, a shell command line) and
// checks what it prints and how it exits, against the real plugins of this build tree.
//
// Every run starts from a clean dlrt environment (`env -u DLRT_...`), so the tests do not
// depend on the caller's shell; a test that wants a variable sets it on the command line.
// Nothing here assumes hardware beyond "some CPU": the CUDA expectations branch on whether
// the machine has an NVIDIA GPU (the driver's /proc or /dev entries), never on what the
// plugin says. The binary links libdlrt only for the op list (dlrt_op_count/dlrt_op_name),
// which `--ops` must show in full.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dlrt/dlrt.h"
#include "dlrt/onnx_ops.h"
#include "dlrt/plugin.h"

#ifndef DLPROBE_PATH
#error "DLPROBE_PATH (the dlprobe binary) must be defined by the build"
#endif

namespace {

using nlohmann::json;

struct ProbeRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `dlprobe <args>` with the dlrt variables cleared and `env` (VAR=value ...) set.
ProbeRun dlprobe(const std::string& args, const std::string& env = "") {
  // A file of its own per run: ctest -j runs these tests in parallel processes.
  std::string err_path = testing::TempDir() + "dlprobe_test_stderr_XXXXXX";
  const int fd = mkstemp(&err_path[0]);
  if (fd < 0) {
    ADD_FAILURE() << "mkstemp failed for " << err_path;
    return ProbeRun{};
  }
  close(fd);
  const std::string cmd =
      "env -u DLRT_PLUGIN_PATH -u DLRT_VISIBLE_DEVICES -u DLRT_PLUGIN_OPTIONS -u DLRT_LOG_LEVEL "
      "-u DLRT_LOG_DEVICE_PLACEMENT " +
      env + " '" DLPROBE_PATH "' " + args + " 2>'" + err_path + "'";
  ProbeRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}

// `dlprobe --json <args>`, parsed; fails the test if it does not exit 0 with valid JSON, and
// then returns an empty report (so the caller's lookups fail as assertions, not aborts).
json probe_json(const std::string& args = "", const std::string& env = "") {
  const ProbeRun r = dlprobe("--json " + args, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json empty = {{"plugins", json::array()},
                      {"devices", json::array()},
                      {"settings", json::array()},
                      {"abi", json::object()}};
  try {
    json j = json::parse(r.out);
    for (const char* key : {"plugins", "devices"})
      if (!j.contains(key) || !j[key].is_array()) {
        ADD_FAILURE() << "dlprobe --json has no \"" << key << "\" array:\n" << r.out;
        return empty;
      }
    return j;
  } catch (const json::exception& e) {
    ADD_FAILURE() << "dlprobe --json printed invalid JSON (" << e.what() << "):\n" << r.out;
    return empty;
  }
}

const json* find_by(const json& array, const char* key, const std::string& value) {
  for (const json& item : array)
    if (item.value(key, "") == value) return &item;
  return nullptr;
}

std::vector<json> devices_of(const json& report, const std::string& plugin) {
  std::vector<json> out;
  for (const json& d : report["devices"])
    if (d.value("plugin", "") == plugin) out.push_back(d);
  return out;
}

bool machine_has_nvidia_gpu() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("/dev/nvidia0", ec)) return true;
  return fs::is_directory("/proc/driver/nvidia/gpus", ec) &&
         !fs::is_empty("/proc/driver/nvidia/gpus", ec);
}

const std::string kBuiltAbi = std::to_string(DLRT_ABI_MAJOR) + "." + std::to_string(DLRT_ABI_MINOR);

TEST(Dlprobe, JsonHasSchemaAndLibraryVersions) {
  const json j = probe_json();
  EXPECT_EQ(j.value("schema_version", 0), 1);
  EXPECT_FALSE(j.value("dlrt_version", "").empty());
  ASSERT_TRUE(j.contains("abi") && j["abi"].is_object()) << j.dump(2);
  EXPECT_EQ(j["abi"].value("major", 0u), static_cast<unsigned>(DLRT_ABI_MAJOR));
  EXPECT_EQ(j["abi"].value("minor", 99u), static_cast<unsigned>(DLRT_ABI_MINOR));
  EXPECT_TRUE(j["plugins"].is_array());
  EXPECT_TRUE(j["devices"].is_array());
  EXPECT_FALSE(j.contains("settings")) << "settings only come with --env";
}

TEST(Dlprobe, JsonListsTheRealPluginsAsLoaded) {
  const json j = probe_json();
  for (const char* name : {"cpu", "reference", "null"}) {
    const json* p = find_by(j["plugins"], "name", name);
    ASSERT_NE(p, nullptr) << name << " plugin missing from:\n" << j["plugins"].dump(2);
    EXPECT_EQ(p->value("status", ""), "loaded") << p->dump(2);
    EXPECT_EQ(p->value("abi", ""), kBuiltAbi) << p->dump(2);
    EXPECT_EQ(p->value("path", "").rfind('/', 0), 0u) << "paths are absolute: " << p->dump(2);
  }
}

TEST(Dlprobe, CpuPluginHasACpuDevice) {
  const json j = probe_json();
  const std::vector<json> cpu = devices_of(j, "cpu");
  ASSERT_GE(cpu.size(), 1u) << j["devices"].dump(2);
  for (const json& d : cpu) {
    EXPECT_EQ(d.value("class", ""), "CPU") << d.dump(2);
    EXPECT_EQ(d.value("platform", ""), "onednn");
    EXPECT_GT(d.value("memory_total", 0ull), 0ull);
    EXPECT_TRUE(d["memory_free"].is_number()) << d.dump(2);
    EXPECT_TRUE(d["attributes"].is_object());
    EXPECT_EQ(d.value("name", "").rfind("/device:", 0), 0u) << d.dump(2);
  }
}

TEST(Dlprobe, NullPluginHasNoDevicesAndSaysWhy) {
  const json j = probe_json();
  const json* p = find_by(j["plugins"], "name", "null");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->value("device_count", -1), 0);
  EXPECT_FALSE(p->value("error", "").empty()) << p->dump(2);
  EXPECT_NE(p->value("error_code", "OK"), "OK") << p->dump(2);
  EXPECT_TRUE(devices_of(j, "null").empty());
}

TEST(Dlprobe, CudaPluginIsListedAndExplainsMissingGpu) {
  if (!DLPROBE_TEST_CUDA_BUILT)
    GTEST_SKIP() << "the cuda plugin is not built (DLRT_BUILD_CUDA=OFF)";
  const json j = probe_json();
  const json* p = find_by(j["plugins"], "platform", "cuda");
  ASSERT_NE(p, nullptr) << "cuda plugin built but not listed:\n" << j["plugins"].dump(2);
  EXPECT_EQ(p->value("status", ""), "loaded") << p->dump(2);
  if (machine_has_nvidia_gpu()) {
    const std::vector<json> gpus = devices_of(j, p->value("name", ""));
    ASSERT_GE(gpus.size(), 1u) << "this machine has an NVIDIA GPU:\n" << p->dump(2);
    EXPECT_EQ(gpus[0].value("class", ""), "GPU");
  } else {
    EXPECT_EQ(p->value("device_count", -1), 0) << p->dump(2);
    EXPECT_FALSE(p->value("error", "").empty()) << "no GPU and no reason: " << p->dump(2);
  }
}

TEST(Dlprobe, RequireOnednnSucceeds) {
  const ProbeRun r = dlprobe("--quiet --require onednn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Dlprobe, RequireCudaFailsWithTheReasonWithoutGpu) {
  const ProbeRun r = dlprobe("--quiet --require cuda");
  if (machine_has_nvidia_gpu() && DLPROBE_TEST_CUDA_BUILT) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return;
  }
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("'cuda'"), std::string::npos) << r.err;
  if (DLPROBE_TEST_CUDA_BUILT) {
    // The plugin's own reason, word for word, is in the message.
    const json j = probe_json();
    const json* p = find_by(j["plugins"], "platform", "cuda");
    ASSERT_NE(p, nullptr);
    EXPECT_NE(r.err.find(p->value("error", "<none>")), std::string::npos) << r.err;
  } else {
    EXPECT_NE(r.err.find("no plugin found"), std::string::npos) << r.err;
  }
}

TEST(Dlprobe, RequireIsRepeatableAndNamesEachUnmetPlatform) {
  const ProbeRun r = dlprobe("-q --require onednn --require no_such_platform");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'no_such_platform'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'onednn'"), std::string::npos) << "onednn is met:\n" << r.err;
}

TEST(Dlprobe, EnvListsLogLevelWithItsSource) {
  const ProbeRun plain = dlprobe("--env");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("DLRT_LOG_LEVEL"), std::string::npos) << plain.out;

  const json deflt = probe_json("--env");
  ASSERT_TRUE(deflt.contains("settings")) << "--env --json has no settings";
  const json* s = find_by(deflt["settings"], "name", "DLRT_LOG_LEVEL");
  ASSERT_NE(s, nullptr) << deflt["settings"].dump(2);
  EXPECT_EQ(s->value("source", ""), "default");

  const json env = probe_json("--env", "DLRT_LOG_LEVEL=error");
  ASSERT_TRUE(env.contains("settings"));
  s = find_by(env["settings"], "name", "DLRT_LOG_LEVEL");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value("source", ""), "environment") << s->dump(2);
  EXPECT_EQ(s->value("value", ""), "error") << s->dump(2);
}

TEST(Dlprobe, VisibleDevicesEnvironmentFiltersDevices) {
  const json all = probe_json();
  ASSERT_GE(devices_of(all, "reference").size(), 1u);
  ASSERT_GE(devices_of(all, "cpu").size(), 1u);

  const json ref_only = probe_json("", "DLRT_VISIBLE_DEVICES=REF:0");
  ASSERT_EQ(ref_only["devices"].size(), 1u) << ref_only["devices"].dump(2);
  EXPECT_EQ(ref_only["devices"][0].value("type", ""), "REF");
  // Filtering hides devices, not plugins: the cpu plugin still reports its device.
  const json* cpu = find_by(ref_only["plugins"], "name", "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_GE(cpu->value("device_count", 0), 1);
  EXPECT_NE(dlprobe("-q --require onednn", "DLRT_VISIBLE_DEVICES=REF:0").exit_code, 0);
}

TEST(Dlprobe, VisibleDevicesFlagOverridesTheEnvironment) {
  const json j = probe_json("--visible-devices CPU:0", "DLRT_VISIBLE_DEVICES=REF:0");
  ASSERT_EQ(j["devices"].size(), 1u) << j["devices"].dump(2);
  EXPECT_EQ(j["devices"][0].value("name", ""), "/device:CPU:0");
}

TEST(Dlprobe, PluginPathAndOptionsPassThrough) {
  const std::string ref = std::string(DLRT_TEST_PLUGIN_DIR) + "/libdlrt-reference.so";
  const json three = probe_json("--no-default-paths --plugin-path " + ref +
                                " --plugin-options reference:num_devices=3");
  ASSERT_EQ(three["plugins"].size(), 1u) << three["plugins"].dump(2);
  EXPECT_EQ(devices_of(three, "reference").size(), 3u) << three["devices"].dump(2);

  // An unknown option is that plugin's load failure, with the key in the reason.
  const json bad = probe_json("--plugin-path " + ref + " --plugin-options reference:bogus=1");
  const json* p = find_by(bad["plugins"], "path", ref);
  ASSERT_NE(p, nullptr) << bad["plugins"].dump(2);
  EXPECT_EQ(p->value("status", ""), "failed");
  EXPECT_NE(p->value("error", "").find("bogus"), std::string::npos) << p->dump(2);
}

TEST(Dlprobe, TextReportShowsPluginsDevicesAndReasons) {
  const ProbeRun r = dlprobe("");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"Plugins (", "Devices (", "/device:CPU:0", "onednn", "reason: "})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << " not in:\n" << r.out;
}

TEST(Dlprobe, BadFlagIsAUsageErrorWithAMessage) {
  const ProbeRun r = dlprobe("--no-such-flag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");

  const ProbeRun missing = dlprobe("--require");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST(Dlprobe, MalformedVisibleDevicesIsAUsageErrorNotACrash) {
  const ProbeRun r = dlprobe("--visible-devices CPU:x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CPU:x"), std::string::npos) << r.err;
}

TEST(Dlprobe, HelpAndVersionExitZero) {
  const ProbeRun help = dlprobe("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--require"), std::string::npos) << help.out;
  const ProbeRun version = dlprobe("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("plugin ABI " + kBuiltAbi), std::string::npos) << version.out;
}

// ---- --ops: the op x device matrix ----------------------------------------------------------

// The "ops" array of `dlprobe --json --ops <args>`, or an empty array (after a failure).
json ops_of(const json& report) {
  if (!report.contains("ops") || !report["ops"].is_array()) {
    ADD_FAILURE() << "no \"ops\" array in:\n" << report.dump(2).substr(0, 2000);
    return json::array();
  }
  return report["ops"];
}

// Every op whose entry for `device` is not {"supported": true}, with its reason.
std::string unsupported_on(const json& ops, const std::string& device) {
  std::string out;
  for (const json& op : ops) {
    const json& d = op["devices"];
    if (!d.contains(device)) {
      out += "  " + op.value("op", "?") + ": device missing\n";
    } else if (!d[device].value("supported", false)) {
      out += "  " + op.value("op", "?") + ": " + d[device].value("reason", "(no reason)") + "\n";
    }
  }
  return out;
}

TEST(DlprobeOps, OpsOnlyWithTheFlag) { EXPECT_FALSE(probe_json().contains("ops")); }

TEST(DlprobeOps, JsonListsEveryOpWithEveryDevice) {
  const json j = probe_json("--ops");
  const json ops = ops_of(j);
  ASSERT_EQ(ops.size(), dlrt_op_count());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].value("op", ""), dlrt_op_name(i));
    EXPECT_FALSE(ops[i].value("doc", "").empty()) << ops[i].dump();
    ASSERT_TRUE(ops[i].contains("devices") && ops[i]["devices"].is_object()) << ops[i].dump();
    EXPECT_EQ(ops[i]["devices"].size(), j["devices"].size()) << ops[i].dump();
    for (const json& d : j["devices"]) {
      const std::string name = d.value("name", "");
      ASSERT_TRUE(ops[i]["devices"].contains(name)) << name << " missing: " << ops[i].dump();
      const json& a = ops[i]["devices"][name];
      ASSERT_TRUE(a.contains("supported") && a["supported"].is_boolean()) << a.dump();
      if (!a["supported"].get<bool>()) {
        EXPECT_FALSE(a.value("reason", "").empty()) << "a \"no\" needs a reason: " << a.dump();
        EXPECT_FALSE(a.value("code", "").empty()) << a.dump();
      }
    }
  }
}

// The CPU plugin implements every op in f32: a ✗ here is a missing kernel, reported by name.
TEST(DlprobeOps, CpuDeviceRunsEveryOp) {
  const json ops = ops_of(probe_json("--ops"));
  ASSERT_EQ(ops.size(), dlrt_op_count());
  const std::string missing = unsupported_on(ops, "/device:CPU:0");
  EXPECT_TRUE(missing.empty()) << "/device:CPU:0 does not run:\n" << missing;
}

TEST(DlprobeOps, ReferenceDeviceRunsEveryOp) {
  const json ops = ops_of(probe_json("--ops"));
  ASSERT_EQ(ops.size(), dlrt_op_count());
  const std::string missing = unsupported_on(ops, "/device:REF:0");
  EXPECT_TRUE(missing.empty()) << "/device:REF:0 does not run:\n" << missing;
}

TEST(DlprobeOps, ARestrictedDeviceSaysNoWithItsReason) {
  const json ops = ops_of(probe_json("--ops --plugin-options 'reference:ops=relu'"));
  const json* relu = find_by(ops, "op", "relu");
  const json* conv = find_by(ops, "op", "conv2d");
  ASSERT_NE(relu, nullptr);
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE((*relu)["devices"]["/device:REF:0"].value("supported", false)) << relu->dump(2);
  const json& no = (*conv)["devices"]["/device:REF:0"];
  EXPECT_FALSE(no.value("supported", true)) << no.dump(2);
  EXPECT_EQ(no.value("code", ""), "UNIMPLEMENTED") << no.dump(2);
  EXPECT_NE(no.value("reason", "").find("conv2d on /device:REF:0"), std::string::npos)
      << no.dump(2);
  EXPECT_NE(no.value("reason", "").find("restricted"), std::string::npos) << no.dump(2);
}

TEST(DlprobeOps, TextShowsTheMatrixAndOneReasonPerNo) {
  const ProbeRun r = dlprobe("--ops --visible-devices REF:0 --plugin-options 'reference:ops=relu'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Ops ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/device:REF:0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("✓"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("✗"), std::string::npos) << r.out;
  // Every op but relu says no, each on its own line with the plugin's reason.
  EXPECT_NE(r.out.find("Not supported (" + std::to_string(dlrt_op_count() - 1) + ")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("UNIMPLEMENTED: conv2d on /device:REF:0: "), std::string::npos) << r.out;
}

// ---- --ops --onnx: the ONNX converters x devices ------------------------------------------

TEST(DlprobeOnnx, NeedsOps) {
  const ProbeRun r = dlprobe("--onnx");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("--ops"), std::string::npos) << r.err;
}

TEST(DlprobeOnnx, JsonListsEveryConverterWithWhatItNeedsPerDevice) {
  const json j = probe_json("--ops --onnx");
  ASSERT_TRUE(j.contains("onnx_ops") && j["onnx_ops"].is_array()) << j.dump().substr(0, 2000);
  const json& onnx = j["onnx_ops"];
  ASSERT_EQ(onnx.size(), dlrt_onnx_op_count());
  ASSERT_GT(onnx.size(), 50u);
  for (size_t i = 0; i < onnx.size(); ++i) {
    EXPECT_EQ(onnx[i].value("onnx_op", ""), dlrt_onnx_op_name(i));
    EXPECT_FALSE(onnx[i].value("maps_to", "").empty()) << onnx[i].dump();
    ASSERT_EQ(onnx[i]["devices"].size(), j["devices"].size()) << onnx[i].dump();
  }
  const json* conv = find_by(onnx, "onnx_op", "Conv");
  const json* shape = find_by(onnx, "onnx_op", "Shape");
  ASSERT_NE(conv, nullptr);
  ASSERT_NE(shape, nullptr);
  // Conv names the fused and the plain convolution; Shape is folded on the host.
  const json& ops = (*conv)["dlrt_ops"];
  EXPECT_NE(std::find(ops.begin(), ops.end(), "conv2d_bias_act"), ops.end()) << conv->dump();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "conv2d"), ops.end()) << conv->dump();
  EXPECT_TRUE((*shape)["dlrt_ops"].empty()) << shape->dump();
  EXPECT_TRUE((*conv)["devices"]["/device:CPU:0"].value("supported", false)) << conv->dump();
}

// A reference device restricted to relu runs the Relu converter and names what Conv misses.
TEST(DlprobeOnnx, ARestrictedDeviceNamesTheMissingOps) {
  const json j = probe_json("--ops --onnx --plugin-options 'reference:ops=relu'");
  const json* relu = find_by(j["onnx_ops"], "onnx_op", "Relu");
  const json* conv = find_by(j["onnx_ops"], "onnx_op", "Conv");
  ASSERT_NE(relu, nullptr);
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE((*relu)["devices"]["/device:REF:0"].value("supported", false)) << relu->dump(2);
  const json& no = (*conv)["devices"]["/device:REF:0"];
  EXPECT_FALSE(no.value("supported", true)) << no.dump(2);
  const json& missing = no["missing"];
  EXPECT_NE(std::find(missing.begin(), missing.end(), "conv2d"), missing.end()) << no.dump(2);

  const ProbeRun r =
      dlprobe("--ops --onnx --visible-devices REF:0 --plugin-options 'reference:ops=relu'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ONNX ops ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("✗ conv2d_bias_act,transpose,conv2d,bias_add"), std::string::npos) << r.out;
}

}  // namespace
