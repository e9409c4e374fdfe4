// rounds_summary.hpp: the arithmetic of `dlbench train --rounds` (train_rounds.cc) on JSON
// alone — no device, no training — so its tests can feed it any numbers, a low peak or an
// impossible floor included (rounds_summary_test.cc).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dlbench {

// {"per_round": the values as given (null where a round had none), "min", "median"}; min and
// median over the rounds that had a number, absent when none had.
nlohmann::json series(const std::vector<nlohmann::json>& per_round);

// The cpu plugin's word on its peak measurement (`device.peak_check`: ok, low, unsteady,
// low+unsteady, clock-unknown, not-measured) as a sentence with the numbers behind it, from a
// run's `device` object; "" when it is "ok" or absent.
std::string peak_check_sentence(const nlohmann::json& device);

// The floor of a step of `model`: `flop_per_step` (0: no count) at the best of the runs'
// `device.peak_gflops` (and their spread), dlrt's fraction of it per round (`dlrt_step`
// seconds), and `warnings`: a round's peak below half of the best, a peak_check other than
// ok, and a floor_fraction above 1 (Winograd for cnn and resnet20 with device.winograd, else
// impossible). `runs` are the rounds' documents (each with a `device`).
nlohmann::json floor_of(const std::string& model, double flop_per_step,
                        const std::vector<nlohmann::json>& runs,
                        const std::vector<double>& dlrt_step);

}  // namespace dlbench
