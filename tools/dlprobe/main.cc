// dlprobe: which dlrt plugins were found, which loaded (and why not), which devices they
// offer, and the settings in effect. It links only libdlrt and finds plugins at run time the
// way every dlrt program does (docs/design.md section 3), so what it shows is what your program
// gets.
//
//   dlprobe                      plugins and devices, as tables
//   dlprobe --json               the same as JSON (schema in json.cc)
//   dlprobe --env                also every setting, its value and where it came from
//   dlprobe --ops                also the op x device matrix (with --json: an "ops" array)
//   dlprobe --ops --onnx         also the ONNX ops the importer converts, what each becomes,
//                                and whether it runs on each device (--json: "onnx_ops")
//   dlprobe --require cuda       exit 1, saying why, unless a cuda device is usable
//   dlprobe --no-isolate         load plugins in-process directly (by default each plugin's
//                                init is tried in a child process first)
//
// Exit status: 0 fine; 1 a --require is not met; 2 bad command line, or options libdlrt
// rejected (e.g. a malformed --visible-devices); 3 an unexpected internal error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "probe.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRequirementUnmet = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

struct Args {
  bool json = false;
  bool env = false;
  bool quiet = false;
  bool ops = false;
  bool onnx = false;
  bool no_default_paths = false;
  bool isolate = true;          // false (--no-isolate): load plugins in-process directly
  double isolate_timeout = 10;  // --isolate-timeout SECONDS
  std::vector<std::string> require;
  std::vector<std::string> plugin_paths;
  std::string visible_devices;
  std::string plugin_options;
  bool has_visible_devices = false;
  bool has_plugin_options = false;
};

int run(const Args& args) {
  dlrt::ContextOptions options;
  for (const std::string& p : args.plugin_paths) {
    // The API takes absolute paths only; a relative one on the command line means
    // "relative to where I am", which is what absolute() makes of it.
    options.plugin_path(std::filesystem::absolute(p).lexically_normal().string());
  }
  if (args.no_default_paths) options.search_default_paths(false);
  // By default every plugin's init is tried in a child process first, so a plugin that
  // crashes or hangs there is reported by name instead of taking dlprobe down.
  options.isolate_plugins(args.isolate, args.isolate_timeout);
  if (args.has_visible_devices) options.visible_devices(args.visible_devices);
  if (args.has_plugin_options) options.plugin_options(args.plugin_options);

  // Plugins that fail to load do not make this fail (they are part of the report); only
  // options libdlrt rejects do, and those came from the command line or the environment.
  std::optional<dlrt::Context> context;
  try {
    context.emplace(options);
  } catch (const dlrt::Error& e) {
    std::cerr << "dlprobe: cannot create a dlrt context: " << e.what() << "\n";
    return kExitUsage;
  }

  const dlprobe::Snapshot snapshot = dlprobe::collect(*context, args.env, args.ops, args.onnx);

  if (!args.quiet) {
    if (args.json) std::cout << dlprobe::render_json(snapshot, args.env).dump(2) << "\n";
    else std::cout << dlprobe::render_text(snapshot, args.env);
  }

  int rc = kExitOk;
  for (const std::string& platform : args.require) {
    const std::string unmet = dlprobe::unmet_requirement(snapshot, platform);
    if (!unmet.empty()) {
      std::cerr << "dlprobe: " << unmet << "\n";
      rc = kExitRequirementUnmet;
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dlprobe: list the dlrt plugins found (loaded or not, and why), the devices they offer, "
      "the ops each device runs (--ops) and the settings in effect."};
  Args args;
  app.add_flag("--json", args.json, "Print the report as JSON (schema_version 1)");
  app.add_flag("--env", args.env,
               "Also list every setting (DLRT_*), its effective value and its source");
  app.add_flag("-q,--quiet", args.quiet, "Print no report (useful with --require)");
  app.add_option("--require", args.require,
                 "Exit 1 unless PLATFORM (e.g. cuda, onednn) has a usable device; repeatable")
      ->type_name("PLATFORM")
      ->allow_extra_args(false);
  app.add_option("--plugin-path", args.plugin_paths,
                 "Plugin file or folder searched before the default places; repeatable")
      ->type_name("PATH")
      ->allow_extra_args(false);
  app.add_flag("--no-default-paths", args.no_default_paths,
               "Search only --plugin-path (not DLRT_PLUGIN_PATH, not the install tree)");
  CLI::Option* visible =
      app.add_option("--visible-devices", args.visible_devices,
                     "Devices to expose, e.g. \"CPU:0,GPU:1\" (overrides DLRT_VISIBLE_DEVICES)")
          ->type_name("LIST");
  CLI::Option* plugin_options =
      app.add_option("--plugin-options", args.plugin_options,
                     "Per-plugin options \"cpu:threads=2;reference:num_devices=3\" "
                     "(overrides DLRT_PLUGIN_OPTIONS)")
          ->type_name("OPTIONS");
  app.add_flag("--isolate,!--no-isolate", args.isolate,
               "Check each plugin's load and init in a child process first (the default), "
               "reporting one that crashes, exits or hangs instead of dying; --no-isolate "
               "loads in-process directly");
  app.add_option("--isolate-timeout", args.isolate_timeout,
                 "Seconds a plugin's init may take in the child process (default 10)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_flag("--ops", args.ops,
               "Also ask every device about every op (on the op's small f32 example) and show "
               "the op x device matrix with the reason for every \"no\"");
  app.add_flag("--onnx", args.onnx,
               "With --ops: also list the ONNX ops the importer converts, what each becomes, "
               "and whether those dlrt ops run on each device")
      ->needs("--ops");
  app.set_version_flag("--version", [] {
    const dlrt::AbiVersion abi = dlrt::abi_version();
    return "dlprobe (dlrt " + dlrt::version() + ", plugin ABI " + std::to_string(abi.major) + "." +
           std::to_string(abi.minor) + ")";
  }());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0; CLI11 prints them.
    const int cli_rc = app.exit(e);
    return cli_rc == 0 ? kExitOk : kExitUsage;
  }
  args.has_visible_devices = visible->count() > 0;
  args.has_plugin_options = plugin_options->count() > 0;

  try {
    return run(args);
  } catch (const dlrt::Error& e) {
    std::cerr << "dlprobe: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "dlprobe: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "dlprobe: internal error: unknown exception\n";
  }
  return kExitInternal;
}
