// samples/common/auto_device.hpp: what the samples' `--device` flag does, shared by
// samples/mnist_cnn and samples/resnet. "auto" hands the choice to dlrt's auto device
// (nn::CompileConfig device "auto": at the first compile, the device that runs the most of the
// model's ops, never the reference oracle unless named; docs/design.md section 4); before any
// data is read it warns about every plugin that did not load and lists the candidates. After
// training a sample prints `model.train_executable().auto_device()`: what was picked and why.
#pragma once

#include <dlrt/dlrt.hpp>

#include <iostream>
#include <string>

namespace samples {

// The reference plugin's devices are the slow oracle (every op, no speed): auto never trains
// on one; only a user who names it (--device REF:0) gets it.
inline bool is_oracle(const dlrt::DeviceInfo& d) { return d.plugin == "reference"; }

// Every plugin that was refused or failed, with its reason, as warnings on stderr: with
// auto, a missing plugin silently changes which device is picked (e.g. cpu:threads=-5
// refuses the cpu plugin), so the user must see why.
inline void warn_about_unloaded_plugins(const dlrt::Context& ctx) {
  for (const dlrt::PluginInfo& p : ctx.plugins())
    if (p.state != DLRT_PLUGIN_LOADED)
      std::cerr << "warning: --device auto: plugin " << (p.name.empty() ? p.path : p.name)
                << " was not loaded, so its devices are not candidates: " << p.error << "\n";
}

// "auto": dlrt's auto device (nn::CompileConfig device "auto"): at the first compile, the
// device that runs the most of the model's ops, GPU before CPU on ties, never the reference
// oracle (the core's rule; docs/design.md section 4). Before any data is read this says which
// devices are candidates, after the reasons of any plugin that did not load, and refuses when
// only oracle devices are visible (UNAVAILABLE: ask for REF:0 by name); after training it
// prints what was picked and why. Anything else must name a visible device (NOT_FOUND lists
// them).
inline std::string pick_device(const dlrt::Context& ctx, const std::string& requested) {
  if (requested != "auto") {
    const dlrt::DeviceInfo d = ctx.device(ctx.find_device(requested));
    return d.name;
  }
  warn_about_unloaded_plugins(ctx);
  std::string candidates, oracle;
  for (const dlrt::DeviceInfo& d : ctx.devices()) {
    if (is_oracle(d)) {
      if (oracle.empty()) oracle = d.name;
      continue;
    }
    candidates += (candidates.empty() ? "" : ", ") + d.name + " (" + d.plugin + " plugin)";
  }
  if (candidates.empty() && !oracle.empty())
    throw dlrt::Error(DLRT_UNAVAILABLE,
                      "--device auto: only the reference plugin's devices (the slow oracle) "
                      "are usable, and auto never picks them; name one to train on it anyway "
                      "(--device " +
                          oracle + "), or fix the plugins warned about above");
  if (candidates.empty())
    throw dlrt::Error(DLRT_UNAVAILABLE,
                      "--device auto: no GPU or CPU device is visible "
                      "(dlprobe says why)");
  std::cerr << "--device auto: candidates: " << candidates
            << "; dlrt picks the one that runs the model's ops when it compiles\n";
  return "auto";
}

}  // namespace samples
