// bench.cc: the helpers bench.hpp declares (statistics, context, device and machine JSON).
#include "bench.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>

namespace dlbench {

Stats stats_of(std::vector<double> samples_us) {
  Stats s;
  s.samples = samples_us.size();
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  const size_t n = samples_us.size();
  s.median_us = n % 2 == 1 ? samples_us[n / 2] : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  s.min_us = samples_us.front();
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(n);
  return s;
}

dlrt::Context make_context(int threads, const std::string& plugin_options) {
  dlrt::ContextOptions options;
  // The cpu plugin's `threads` option (plugins/cpu/plugin.cc); other plugins ignore it only
  // because it is addressed to "cpu:". Given options replace DLRT_PLUGIN_OPTIONS, so
  // --plugin-options carries the rest (e.g. cpu:winograd=0).
  std::string text = plugin_options;
  if (threads > 0)
    text += (text.empty() ? "" : ";") + std::string("cpu:threads=") + std::to_string(threads);
  if (!text.empty()) options.plugin_options(text);
  return dlrt::Context(options);
}

size_t find_device(const dlrt::Context& ctx, const std::string& spec) {
  return ctx.find_device(spec);
}

json device_json(const dlrt::DeviceInfo& d) {
  json j;
  j["name"] = d.name;
  j["model"] = d.model;
  j["platform"] = d.platform;
  j["core_count"] = d.core_count;
  if (auto threads = d.attr("threads")) j["threads"] = threads->i;
  if (auto isa = d.attr("isa")) j["isa"] = isa->s;
  if (auto winograd = d.attr("winograd")) j["winograd"] = winograd->i != 0;
  j["library_versions"] = d.library_versions;
  j["peak_gflops"] = d.peak_gflops;
  // The cpu plugin's peak measurement (plugins/cpu/peak.hpp): how many tries it took, their
  // spread, the rate the ISA and clock lead one to expect, and its verdict on the figure.
  if (auto a = d.attr("nominal_peak_gflops")) j["expected_peak_gflops"] = a->f;
  if (auto a = d.attr("cpu_mhz")) j["cpu_mhz"] = a->f;
  if (auto a = d.attr("clock_source")) j["clock_source"] = a->s;
  if (auto a = d.attr("flops_per_cycle")) j["flops_per_cycle"] = a->i;
  if (auto a = d.attr("peak_attempts")) j["peak_attempts"] = a->i;
  if (auto a = d.attr("peak_spread")) j["peak_spread"] = a->f;
  if (auto a = d.attr("peak_check")) j["peak_check"] = a->s;
  return j;
}

json load_average() {
  std::ifstream f("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(f >> a >> b >> c)) return json::array();
  return json::array({a, b, c});
}

}  // namespace dlbench
