// train_rounds.cc: `dlbench train --model M --rounds R` (R >= 2; 3 by default), the form of
// every comparison with PyTorch that is meant to survive a shared, noisy machine.
//
// Why rounds. On the 2-core guests dlbench runs on, a process's step time sits at one of two
// levels (about 2x apart) depending on what the neighbours do, and it can switch between one
// process and the next. A dlrt run and a PyTorch run minutes apart may land on different
// levels, and their ratio then says more about the neighbours than about either framework.
// So each round runs dlrt and then every anchor mode (eager, channels_last, compile) back to
// back, the ratio is taken within the round, and the rounds are summarised by min and median:
// a round that fell on a bad stretch shows up as an outlier instead of moving the answer.
//
// Each round is a whole `dlbench train` run (run_train: its own context, so its own peak
// measurement, compile, warm-up and timed steps, then the twins), kept in "runs". Every
// model's run gives the same three things (see train.cc, train_text.cc, train_vae.cc,
// train_dcgan.cc): step_seconds (dlrt), flop_per_step (0 where not counted) and anchors
// (mode -> {"step_seconds"} or {"unavailable": why}). From them the summary:
//   dlrt.step_seconds            per round, with min and median
//   anchors.MODE.ratio           per round: the anchor's step over dlrt's (above 1: dlrt is
//                                faster), with min and median; or why MODE could not run
//   best_anchor                  the mode with the lowest median ratio (PyTorch's best
//                                configuration here) and that ratio
//   floor                        the step's FLOP at the run's best measured peak, and dlrt's
//                                step time over it per round (floor_fraction), with every
//                                reason to distrust it spelled out in floor.warnings
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bench.hpp"

namespace dlbench {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
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

// Convolutions the cpu plugin may run as Winograd F(4x4, 3x3) (3x3, stride 1: cnn's and
// resnet20's; kernels/winograd_conv.hpp): 36 multiplies per 4x4 output tile and channel pair
// where the direct convolution the FLOP count assumes does 144, so only there can dlrt's step
// beat the count's floor.
bool has_winograd_convolutions(const std::string& model) {
  return model == "cnn" || model == "resnet20";
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

}  // namespace

json run_train_rounds(const TrainOptions& options, int64_t rounds) {
  if (rounds < 2)
    throw std::runtime_error("--rounds " + std::to_string(rounds) +
                             ": run_train_rounds expects >= 2 (1 is a single run_train)");
  json doc;
  doc["mode"] = "train_rounds";
  doc["model"] = options.model;
  doc["rounds"] = rounds;
  doc["cpu"] = cpu_json();
  doc["ratio_definition"] =
      "anchor step_seconds / dlrt step_seconds within one round: above 1, dlrt is faster";
  std::vector<json> runs;
  std::vector<double> dlrt_step;
  std::vector<std::string> modes;  // in the order the first round ran them
  std::map<std::string, std::vector<json>> anchor_step, ratio;
  std::map<std::string, std::string> reason;
  for (int64_t r = 0; r < rounds; ++r) {
    json run = run_train(options);
    run["round"] = r + 1;
    const double s = run.at("step_seconds").get<double>();
    dlrt_step.push_back(s);
    if (run.contains("anchors"))
      for (auto it = run.at("anchors").begin(); it != run.at("anchors").end(); ++it) {
        const std::string& m = it.key();
        if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(m);
        anchor_step[m].resize(static_cast<size_t>(r));  // nulls for rounds it was missing from
        ratio[m].resize(static_cast<size_t>(r));
        if (it->contains("step_seconds")) {
          const double a = it->at("step_seconds").get<double>();
          anchor_step[m].push_back(a);
          ratio[m].push_back(a / s);
        } else {
          anchor_step[m].push_back(nullptr);
          ratio[m].push_back(nullptr);
          reason[m] = it->at("unavailable").get<std::string>();
        }
      }
    runs.push_back(std::move(run));
  }

  json summary;
  std::vector<json> dlrt_json(dlrt_step.begin(), dlrt_step.end());
  summary["dlrt"] = {{"step_seconds", series(dlrt_json)},
                     {"step_seconds_source", runs.front().value("step_seconds_source", "")}};
  json anchors = json::object(), best = nullptr;
  for (const std::string& m : modes) {
    anchor_step[m].resize(static_cast<size_t>(rounds));
    ratio[m].resize(static_cast<size_t>(rounds));
    json a = {{"step_seconds", series(anchor_step[m])}, {"ratio", series(ratio[m])}};
    if (reason.count(m)) a["unavailable"] = reason[m];  // in at least one round
    if (a.at("ratio").contains("median")) {
      const double med = a.at("ratio").at("median").get<double>();
      if (best.is_null() || med < best.at("ratio_median").get<double>())
        best = {{"mode", m}, {"ratio_median", med}};
    }
    anchors[m] = std::move(a);
  }
  if (!modes.empty()) {
    summary["anchors"] = anchors;
    // The fastest PyTorch configuration: the ratio a target is stated against.
    summary["best_anchor"] = best.is_null() ? json{{"unavailable", "no anchor mode ran"}} : best;
  }
  summary["floor"] = floor_of(options.model, runs.front().value("flop_per_step", 0.0), runs,
                              dlrt_step);
  doc["isa_dispatched"] = runs.front().at("device").value("isa", "");
  doc["summary"] = std::move(summary);
  doc["runs"] = runs;
  return doc;
}

}  // namespace dlbench
