// train_side_by_side.cc: `dlbench train --precision f32,bf16 [--rounds R]`, the reference
// models under several dtype policies, side by side in one dlbench run: R rounds, each
// training once per precision in the order given (f32, bf16, f32, bf16, ...), so a noisy
// stretch of a shared machine falls on both and the per-round ratios stay comparable. Every
// run is the whole `dlbench train` of that precision (its own context, compile, warm-up and
// timed epochs; with --compare-torch its own PyTorch twin: channels-last f32, or bf16 under
// torch.autocast), kept in "runs". The summary gives, per precision, the medians over
// rounds, and for each precision after the first its time over the first's, round by round
// and their median: below 1 means faster than the first.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "bench.hpp"

namespace dlbench {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

json run_train_side_by_side(const TrainOptions& options, const std::vector<std::string>& precisions,
                            int64_t rounds) {
  if (precisions.empty())
    throw std::runtime_error("--precision: expected at least one of f32, bf16, f16");
  for (size_t i = 0; i < precisions.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (precisions[i] == precisions[j])
        throw std::runtime_error("--precision " + precisions[i] +
                                 " is named twice; expected each of f32, bf16, f16 at most once");
  if (rounds < 1)
    throw std::runtime_error("--rounds " + std::to_string(rounds) + ": expected >= 1");
  json runs = json::array();
  // per precision: one value per round
  std::map<std::string, std::vector<double>> step_ms, epoch_s, torch_ratio;
  for (int64_t r = 0; r < rounds; ++r)
    for (const std::string& p : precisions) {
      TrainOptions o = options;
      o.precision = p;
      json doc = run_train(o);
      doc["round"] = r + 1;
      step_ms[p].push_back(doc.at("ms_per_step").get<double>());
      epoch_s[p].push_back(doc.at("train_seconds_per_epoch").get<double>());
      if (doc.contains("ratio"))
        torch_ratio[p].push_back(doc.at("ratio").at("epoch").get<double>());
      runs.push_back(std::move(doc));
    }
  json summary = json::object();
  for (const std::string& p : precisions) {
    json s = {{"ms_per_step", step_ms[p]},
              {"ms_per_step_median", median(step_ms[p])},
              {"train_seconds_per_epoch", epoch_s[p]},
              {"train_seconds_per_epoch_median", median(epoch_s[p])}};
    if (!torch_ratio[p].empty()) {
      // dlrt's epoch over PyTorch's (below 1: dlrt faster), and its inverse, "x faster".
      s["torch_epoch_ratio"] = torch_ratio[p];
      s["torch_epoch_ratio_median"] = median(torch_ratio[p]);
    }
    if (p != precisions.front()) {
      const std::string& first = precisions.front();
      std::vector<double> step_ratio, epoch_ratio;
      for (int64_t r = 0; r < rounds; ++r) {
        step_ratio.push_back(step_ms[p][r] / step_ms[first][r]);
        epoch_ratio.push_back(epoch_s[p][r] / epoch_s[first][r]);
      }
      s["over_" + first] = {{"ms_per_step", step_ratio},
                            {"ms_per_step_median", median(step_ratio)},
                            {"train_seconds_per_epoch", epoch_ratio},
                            {"train_seconds_per_epoch_median", median(epoch_ratio)}};
    }
    summary[p] = std::move(s);
  }
  json doc;
  doc["mode"] = "train_side_by_side";
  doc["model"] = options.model;
  doc["precisions"] = precisions;
  doc["rounds"] = rounds;
  doc["summary"] = std::move(summary);
  doc["runs"] = std::move(runs);
  return doc;
}

}  // namespace dlbench
