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
#include <stdexcept>

#include "bench.hpp"
#include "rounds_summary.hpp"

namespace dlbench {

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
