// rounds_summary.cc: see rounds_summary.hpp.
#include "rounds_summary.hpp"

#include <algorithm>
#include <sstream>

namespace dlbench {

using json = nlohmann::json;
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

// Convolutions the cpu plugin may run as Winograd F(4x4, 3x3) (3x3, stride 1: cnn's and
// resnet20's; kernels/winograd_conv.hpp): 36 multiplies per 4x4 output tile and channel pair
// where the direct convolution the FLOP count assumes does 144, so only there can dlrt's step
// beat the count's floor.
bool has_winograd_convolutions(const std::string& model) {
  return model == "cnn" || model == "resnet20";
}

}  // namespace

// {"per_round": values (null where a round had none), "min", "median"} over the rounds that
// had a value.
json series(const std::vector<json>& per_round) {
  std::vector<double> have;
  for (const json& v : per_round)
    if (v.is_number()) have.push_back(v.get<double>());
  json s = {{"per_round", per_round}};
  if (!have.empty()) {
    s["min"] = *std::min_element(have.begin(), have.end());
    s["median"] = median_of(have);
  }
  return s;
}

// The cpu plugin's word on its peak measurement (plugins/cpu/device.cc, peak_check) as a
// sentence with the numbers behind it; "" when it is "ok" or the device has no such check.
std::string peak_check_sentence(const json& d) {
  const std::string check = d.value("peak_check", "ok");
  if (check == "ok") return "";
  const std::string measured = fmt(d.value("peak_gflops", 0.0));
  const std::string expected = fmt(d.value("expected_peak_gflops", 0.0)) + " GFLOP/s (" +
                               std::to_string(d.value("threads", 0)) + " threads x " +
                               fmt(d.value("cpu_mhz", 0.0)) + " MHz from " +
                               d.value("clock_source", std::string("?")) + " x " +
                               std::to_string(d.value("flops_per_cycle", 0)) + " FLOP/cycle)";
  std::string s;
  if (check == "not-measured") return "the peak was not measured; peak_gflops is the nominal " + expected;
  if (check == "clock-unknown")
    return "the clock is unknown, so the measured peak " + measured +
           " GFLOP/s could not be checked against the ISA's FMA rate";
  if (check.rfind("low", 0) == 0)
    s = "the peak measurement " + measured + " GFLOP/s is low against the expected " + expected +
        " (threads descheduled or sharing their cores while it ran)";
  if (check.find("unsteady") != std::string::npos)
    s += std::string(s.empty() ? "" : "; ") + "the peak's " +
         std::to_string(d.value("peak_attempts", 0)) +
         " measurements never agreed twice within 3% (spread " +
         fmt(100 * d.value("peak_spread", 0.0)) + "%)";
  return s.empty() ? "the cpu plugin's peak check says '" + check + "'" : s;
}

// The floor of the step at the run's best peak, dlrt's fraction of it per round, and what
// makes it suspect: a round whose peak came back below half the best (that measurement was
// low: a thread descheduled, or sharing its core), the plugin's own check of its measurement,
// and a fraction above 1 (Winograd, or else impossible).
json floor_of(const std::string& model, double flop_per_step, const std::vector<json>& runs,
              const std::vector<double>& dlrt_step) {
  json floor = json::object();
  json warnings = json::array();
  std::vector<double> peaks;
  for (const json& r : runs) peaks.push_back(r.at("device").at("peak_gflops").get<double>());
  const double best = peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end());
  floor["peak_gflops_per_round"] = peaks;
  floor["peak_gflops"] = best;
  // How far the rounds' measurements scattered: (highest - lowest) / highest. Each round's
  // own tries' spread is its device.peak_spread.
  if (best > 0)
    floor["peak_spread_across_rounds"] =
        (best - *std::min_element(peaks.begin(), peaks.end())) / best;
  floor["peak_source"] = "the highest of the rounds' peak measurements (each round's context measures its own)";
  for (size_t i = 0; i < peaks.size(); ++i) {
    if (peaks[i] < 0.5 * best)
      warnings.push_back("round " + std::to_string(i + 1) + "'s peak measurement " + fmt(peaks[i]) +
                         " GFLOP/s is below half of the run's best " + fmt(best) +
                         ": it came back low (a thread descheduled or sharing its core); the "
                         "floor uses the best");
    const std::string why = peak_check_sentence(runs[i].at("device"));
    if (!why.empty()) warnings.push_back("round " + std::to_string(i + 1) + ": " + why);
  }
  if (flop_per_step <= 0) {
    floor["unavailable"] = "no FLOP count for --model " + model + " (flop_per_step is 0)";
    floor["warnings"] = warnings;
    return floor;
  }
  floor["flop_per_step"] = flop_per_step;
  if (best <= 0) {
    floor["unavailable"] = "the device reports no peak (peak_gflops 0)";
    floor["warnings"] = warnings;
    return floor;
  }
  const double floor_s = flop_per_step / (best * 1e9);
  floor["floor_seconds"] = floor_s;
  std::vector<json> fraction;
  double highest = 0;
  for (double s : dlrt_step) {
    fraction.push_back(floor_s / s);
    highest = std::max(highest, floor_s / s);
  }
  floor["floor_fraction"] = series(fraction);
  if (highest > 1) {
    const bool winograd = has_winograd_convolutions(model) && !runs.empty() &&
                          runs.front().at("device").value("winograd", false);
    warnings.push_back(
        winograd ? "floor_fraction " + fmt(highest) +
                       " is above 1: the count is the direct convolutions' multiply-adds, and "
                       "the cpu plugin may run 3x3 convolutions as Winograd F(4x4,3x3), which "
                       "does up to 4x fewer multiplies (--plugin-options cpu:winograd=0 for a "
                       "run the count describes)"
                 : "floor_fraction " + fmt(highest) +
                       " is above 1, which is impossible without Winograd (off or not "
                       "applicable here): the peak is too low or the FLOP count too high");
  }
  floor["warnings"] = warnings;
  return floor;
}

}  // namespace dlbench
