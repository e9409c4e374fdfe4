// loader_windows_test.cc: the plugin loader on Windows, through libdlrt.dll's C API
// (core/platform/windows/, docs/windows.md): the real plugins found by the default search and
// by DLRT_PLUGIN_PATH (a ';' list), a DLL without the entry point, a plugin built for a newer
// ABI, hostile plugins caught by the isolated check in a child process, and a plugin folder
// that Everyone may write to. The plugin folders are found from this program's own location
// (bin\dlrt\plugins, bin\dlrt\test-plugins), as libdlrt.dll finds its default folder.
#include <windows.h>

#include <aclapi.h>
#include <sddl.h>

#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// UTF-8 <-> UTF-16 for the few Windows calls made here.
std::string narrow(const std::wstring& w) {
  if (w.empty()) return {};
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0,
                                      nullptr, nullptr);
  std::string s(static_cast<size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr,
                        nullptr);
  return s;
}

// This program's folder (bin\).
fs::path bin_dir() {
  std::wstring name(32768, L'\0');
  name.resize(::GetModuleFileNameW(nullptr, name.data(), static_cast<DWORD>(name.size())));
  return fs::path(name).parent_path();
}

std::string u8(const fs::path& p) { return narrow(p.wstring()); }
std::string plugin_dir() { return u8(bin_dir() / "dlrt" / "plugins"); }
std::string case_dir(const char* name) { return u8(bin_dir() / "dlrt" / "test-plugins" / name); }
std::string case_file(const char* name) {
  return case_dir(name) + "\\libdlrt-loadertest-" + name + ".dll";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

struct Result {
  dlrt_code code;
  std::string message;
};
Result take(dlrt_status* s) {
  Result r{dlrt_status_code(s), dlrt_status_message(s)};
  dlrt_status_free(s);
  return r;
}

// A context over `paths` (no default search unless asked), with isolation as given.
struct Ctx {
  explicit Ctx(std::vector<std::string> p, bool search_default = false, int32_t isolate = 0,
               double timeout_s = 0)
      : paths(std::move(p)) {
    for (const auto& s : paths) ptrs.push_back(s.c_str());
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.plugin_paths = ptrs.data();
    o.num_plugin_paths = ptrs.size();
    o.search_default_paths = search_default ? 1 : 0;
    o.isolate_plugins = isolate;
    o.isolate_timeout_s = timeout_s;
    status = take(dlrt_context_create(&o, &ctx));
  }
  ~Ctx() { dlrt_context_destroy(ctx); }
  size_t count() const { return dlrt_context_plugin_count(ctx); }
  dlrt_plugin_info plugin(size_t i) const {
    dlrt_plugin_info info{};
    info.struct_size = DLRT_STRUCT_SIZE(dlrt_plugin_info);
    Result r = take(dlrt_context_plugin_info(ctx, i, &info));
    EXPECT_EQ(r.code, DLRT_OK) << r.message;
    return info;
  }
  // The record of the plugin whose file name contains `name`; fails the test if none.
  dlrt_plugin_info find(const std::string& name) const {
    for (size_t i = 0; i < count(); ++i) {
      dlrt_plugin_info info = plugin(i);
      if (contains(info.path, name)) return info;
    }
    ADD_FAILURE() << "no plugin record for " << name;
    return dlrt_plugin_info{};
  }
  std::vector<std::string> paths;
  std::vector<const char*> ptrs;
  dlrt_context* ctx = nullptr;
  Result status{DLRT_OK, ""};
};

TEST(WindowsLoader, DefaultSearchFindsTheReferencePluginBesideLibdlrt) {
  Ctx c({}, /*search_default=*/true);
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  dlrt_plugin_info ref = c.find("libdlrt-reference.dll");
  EXPECT_EQ(ref.state, DLRT_PLUGIN_LOADED) << ref.error;
  EXPECT_GT(ref.device_count, 0);
  EXPECT_TRUE(contains(ref.path, ":\\")) << ref.path;  // a canonical Windows path
  EXPECT_GT(dlrt_context_device_count(c.ctx), 0u);
  // The null plugin loads and says why it has no devices.
  dlrt_plugin_info null = c.find("libdlrt-null.dll");
  EXPECT_EQ(null.state, DLRT_PLUGIN_LOADED) << null.error;
  EXPECT_EQ(null.device_count, 0);
  EXPECT_NE(std::string(null.error), "");
}

TEST(WindowsLoader, PluginPathIsASemicolonList) {
  const std::string list = case_dir("good") + ";" + plugin_dir();
  ASSERT_EQ(_putenv_s("DLRT_PLUGIN_PATH", list.c_str()), 0);
  Ctx c({}, /*search_default=*/true);
  _putenv_s("DLRT_PLUGIN_PATH", "");
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  EXPECT_EQ(c.find("libdlrt-loadertest-good.dll").state, DLRT_PLUGIN_LOADED);
  EXPECT_EQ(c.find("libdlrt-reference.dll").state, DLRT_PLUGIN_LOADED);
}

TEST(WindowsLoader, RelativePathsAreRefused) {
  Ctx c({"dlrt\\plugins"});
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  ASSERT_EQ(c.count(), 1u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_REFUSED);
  EXPECT_TRUE(contains(c.plugin(0).error, "is a relative path")) << c.plugin(0).error;
}

TEST(WindowsLoader, MissingExportIsNamed) {
  Ctx c({case_dir("no_entry"), case_dir("good")});
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  ASSERT_EQ(c.count(), 2u);
  dlrt_plugin_info bad = c.plugin(0);
  EXPECT_EQ(bad.state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(bad.error_code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(bad.error, "does not export dlrt_plugin_init")) << bad.error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED) << c.plugin(1).error;
}

TEST(WindowsLoader, AbiTooNewIsRefused) {
  Ctx c({case_dir("wrong_major")});
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  ASSERT_EQ(c.count(), 1u);
  dlrt_plugin_info bad = c.plugin(0);
  EXPECT_EQ(bad.state, DLRT_PLUGIN_REFUSED);
  EXPECT_EQ(bad.error_code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(bad.error, "was built for plugin ABI 2.0")) << bad.error;
  EXPECT_TRUE(contains(bad.error, "libdlrt-loadertest-wrong_major.dll")) << bad.error;
}

TEST(WindowsLoader, NotADllFailsWithTheSystemsReason) {
  const fs::path dir = bin_dir() / "windows-test-notadll";
  fs::create_directories(dir);
  const fs::path file = dir / "libdlrt-text.dll";
  {
    std::FILE* f = _wfopen(file.c_str(), L"wb");
    ASSERT_NE(f, nullptr);
    std::fputs("text", f);
    std::fclose(f);
  }
  {
    // The context holds the refused file open (deny-write) as long as it lives, so the
    // folder is removed after it.
    Ctx c({u8(file)});
    ASSERT_EQ(c.count(), 1u);
    dlrt_plugin_info bad = c.plugin(0);
    EXPECT_EQ(bad.state, DLRT_PLUGIN_FAILED);
    // GetLastError's text and number (ERROR_BAD_EXE_FORMAT, 193).
    EXPECT_TRUE(contains(bad.error, "LoadLibraryExW(")) << bad.error;
    EXPECT_TRUE(contains(bad.error, "(error 193)")) << bad.error;
  }
  fs::remove_all(dir);
}

// A plugin in a folder whose name is not ASCII (Latin accents, Greek, CJK; UTF-16 on disk, UTF-8
// in the C API): found, checked and loaded in process, and by the isolated check in a child
// process, whose command line carries the path.
TEST(WindowsLoader, PluginUnderANonAsciiFolderLoads) {
  const fs::path dir =
      bin_dir() / "windows-test-unicode" / L"pl\u00fcgins-\u00e9t\u00e9-\u03b1\u03b2-\u4e2d\u6587";
  std::error_code ec;
  fs::remove_all(dir.parent_path(), ec);
  fs::create_directories(dir);
  fs::copy_file(case_file("good"), dir / L"libdlrt-loadertest-good.dll");
  for (int32_t isolate : {0, 1}) {
    Ctx c({u8(dir)}, /*search_default=*/false, isolate);
    ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
    ASSERT_EQ(c.count(), 1u);
    const dlrt_plugin_info info = c.plugin(0);
    EXPECT_EQ(info.state, DLRT_PLUGIN_LOADED) << "isolate=" << isolate << ": " << info.error;
    EXPECT_TRUE(contains(info.path, "\u4e2d\u6587")) << info.path;  // reported in UTF-8
  }
  fs::remove_all(dir.parent_path(), ec);
}

// A folder holding a copy of the good plugin, whose DACL is set from `sddl`; removed after.
struct AclFolder {
  explicit AclFolder(const wchar_t* name, const wchar_t* sddl) {
    dir = bin_dir() / "windows-test-acl" / name;
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    file = dir / L"libdlrt-loadertest-copy.dll";
    fs::copy_file(case_file("good"), file);
    PSECURITY_DESCRIPTOR sd = nullptr;
    EXPECT_TRUE(::ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd,
                                                                       nullptr));
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = nullptr;
    ::GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted);
    set_rc =
        ::SetNamedSecurityInfoW(const_cast<wchar_t*>(dir.c_str()), SE_FILE_OBJECT,
                                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                                nullptr, nullptr, dacl, nullptr);
    ::LocalFree(sd);
  }
  ~AclFolder() {
    std::error_code ec;
    fs::remove_all(dir.parent_path(), ec);
  }
  fs::path dir, file;
  DWORD set_rc = 0;
};

TEST(WindowsLoaderSecurity, EveryoneWritableFolderIsRefusedNamingTheEntry) {
  AclFolder f(L"everyone", L"D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;OW)(A;;FA;;;WD)");
  ASSERT_EQ(f.set_rc, static_cast<DWORD>(ERROR_SUCCESS));
  Ctx c({u8(f.dir)});
  ASSERT_EQ(c.count(), 1u);
  dlrt_plugin_info p = c.plugin(0);
  EXPECT_EQ(p.state, DLRT_PLUGIN_REFUSED) << p.error;
  EXPECT_EQ(p.error_code, DLRT_PERMISSION_DENIED);
  EXPECT_TRUE(contains(p.error, "plugin folder")) << p.error;
  EXPECT_TRUE(contains(p.error, "is writable by Everyone")) << p.error;
  EXPECT_TRUE(contains(p.error, "S-1-1-0")) << p.error;
}

TEST(WindowsLoaderSecurity, TheSameFolderReadOnlyForEveryoneLoads) {
  // 0x1200a9: read and execute. The control for the test above: only the entry differs.
  AclFolder f(L"readonly", L"D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;OW)(A;;0x1200a9;;;WD)");
  ASSERT_EQ(f.set_rc, static_cast<DWORD>(ERROR_SUCCESS));
  Ctx c({u8(f.dir)});
  ASSERT_EQ(c.count(), 1u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_LOADED) << c.plugin(0).error;
}

struct Hostile {
  const char* dir;
  dlrt_code code;
  const char* says;
};
void PrintTo(const Hostile& h, std::ostream* os) { *os << h.dir; }

class WindowsIsolation : public ::testing::TestWithParam<Hostile> {};

// The probe runs each plugin's init in dlrt-plugin-check.exe inside a job object: a crash,
// an exit or a hang there is reported with the plugin's path, and the good plugin loads.
TEST_P(WindowsIsolation, HostilePluginIsNamedAndTheGoodOneStillLoads) {
  const Hostile& h = GetParam();
  const auto t0 = std::chrono::steady_clock::now();
  Ctx c({case_dir(h.dir), case_dir("good")}, false, /*isolate=*/1, /*timeout_s=*/2.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  ASSERT_EQ(c.count(), 2u);
  dlrt_plugin_info bad = c.plugin(0);
  EXPECT_EQ(bad.state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(bad.error_code, h.code);
  EXPECT_TRUE(contains(bad.error, case_file(h.dir))) << bad.error;
  EXPECT_TRUE(contains(bad.error, h.says)) << bad.error;
  EXPECT_TRUE(contains(bad.error, "checked in a child process")) << bad.error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED) << c.plugin(1).error;
  EXPECT_LT(took, 20.0) << "the hang must end at the 2 s timeout";
}

INSTANTIATE_TEST_SUITE_P(
    HostileInit, WindowsIsolation,
    ::testing::Values(
        Hostile{"init_segfault", DLRT_INTERNAL, "crashed with EXCEPTION_ACCESS_VIOLATION"},
        Hostile{"init_abort", DLRT_INTERNAL, "exited with status 3 in init"},
        Hostile{"init_exit", DLRT_INTERNAL, "exited with status 3 in init"},
        Hostile{"init_hang", DLRT_DEADLINE_EXCEEDED, "did not return from init within 2.0 s"}),
    [](const ::testing::TestParamInfo<Hostile>& info) { return std::string(info.param.dir); });

}  // namespace
