// rounds_summary_test: the arithmetic of `dlbench train --rounds` on made-up rounds, so the
// cases a real machine produces only now and then — a peak measurement that came back at
// half, a floor_fraction above 1 — are checked every time. No device, no timing.
#include "rounds_summary.hpp"

#include <gtest/gtest.h>

#include <string>

namespace dlbench {
namespace {

using json = nlohmann::json;

// A round's document as floor_of reads it: its device's peak and the plugin's check.
json run_with_peak(double peak, const std::string& check = "ok", bool winograd = true) {
  return {{"device",
           {{"peak_gflops", peak},
            {"peak_check", check},
            {"expected_peak_gflops", 156.5},
            {"threads", 2},
            {"cpu_mhz", 2445.4},
            {"clock_source", "/proc/cpuinfo"},
            {"flops_per_cycle", 32},
            {"peak_attempts", 8},
            {"peak_spread", 0.25},
            {"winograd", winograd}}}};
}

bool any_contains(const json& warnings, const std::string& text) {
  for (const json& w : warnings)
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(RoundsSummary, SeriesSkipsRoundsWithoutAValue) {
  const json s = series({3.0, nullptr, 1.0, 2.0});
  EXPECT_EQ(s.at("per_round").size(), 4u);
  EXPECT_TRUE(s.at("per_round")[1].is_null());
  EXPECT_DOUBLE_EQ(s.at("min").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s.at("median").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(series({1.0, 4.0}).at("median").get<double>(), 2.5);
  EXPECT_FALSE(series({nullptr, nullptr}).contains("median"));
}

// The incident behind the check: one round measured 120.7 GFLOP/s, the other 236. The floor
// uses the best, and the low round is named.
TEST(RoundsSummary, PeakBelowHalfOfTheBestIsAWarning) {
  const json floor = floor_of("cnn", 1.0e9, {run_with_peak(236.0), run_with_peak(110.0)},
                              {0.02, 0.02});
  EXPECT_DOUBLE_EQ(floor.at("peak_gflops").get<double>(), 236.0);
  EXPECT_DOUBLE_EQ(floor.at("floor_seconds").get<double>(), 1.0e9 / 236.0e9);
  EXPECT_DOUBLE_EQ(floor.at("peak_spread_across_rounds").get<double>(), (236.0 - 110.0) / 236.0);
  EXPECT_TRUE(any_contains(floor.at("warnings"), "round 2's peak measurement 110"))
      << floor.dump(1);
  EXPECT_FALSE(any_contains(floor.at("warnings"), "round 1"));
}

TEST(RoundsSummary, PluginsPeakCheckIsSpelledOut) {
  const json floor =
      floor_of("cnn", 1.0e9, {run_with_peak(120.7, "low+unsteady")}, {0.02});
  const json& w = floor.at("warnings");
  EXPECT_TRUE(any_contains(w, "120.7 GFLOP/s is low against the expected 156.5")) << w.dump(1);
  EXPECT_TRUE(any_contains(w, "2 threads x 2445 MHz from /proc/cpuinfo x 32 FLOP/cycle"))
      << w.dump(1);
  EXPECT_TRUE(any_contains(w, "8 measurements never agreed")) << w.dump(1);
  EXPECT_EQ(peak_check_sentence(run_with_peak(200.0).at("device")), "");
}

// Faster than the floor: Winograd explains it for the cnn with Winograd on; the char
// Transformer has no convolutions, so there it is impossible.
TEST(RoundsSummary, FloorFractionAboveOneIsExplainedOrImpossible) {
  const json wino = floor_of("cnn", 2.0e9, {run_with_peak(100.0)}, {0.01});  // floor 0.02 s
  EXPECT_DOUBLE_EQ(wino.at("floor_fraction").at("median").get<double>(), 2.0);
  EXPECT_TRUE(any_contains(wino.at("warnings"), "Winograd")) << wino.dump(1);

  const json off = floor_of("cnn", 2.0e9, {run_with_peak(100.0, "ok", false)}, {0.01});
  EXPECT_TRUE(any_contains(off.at("warnings"), "impossible")) << off.dump(1);
  const json text = floor_of("char_transformer", 2.0e9, {run_with_peak(100.0)}, {0.01});
  EXPECT_TRUE(any_contains(text.at("warnings"), "impossible")) << text.dump(1);

  const json fine = floor_of("cnn", 1.0e9, {run_with_peak(100.0)}, {0.02});
  EXPECT_TRUE(fine.at("warnings").empty()) << fine.dump(1);
}

TEST(RoundsSummary, NoFlopCountSaysSo) {
  const json floor = floor_of("other", 0.0, {run_with_peak(100.0)}, {0.02});
  EXPECT_NE(floor.at("unavailable").get<std::string>().find("no FLOP count"), std::string::npos);
  EXPECT_FALSE(floor.contains("floor_fraction"));
}

}  // namespace
}  // namespace dlbench
