// algo_choice_test.cc: the cuDNN algorithm rule (algo_choice.hpp) on made-up heuristic
// lists: heuristic order wins, TF32 and failed candidates are skipped, deterministic=1 skips
// atomics-based algorithms and deterministic=0 allows them, the workspace cap applies.
#include "algo_choice.hpp"

#include <gtest/gtest.h>

namespace dlrt::cuda {
namespace {

AlgoCandidate ok(int algo, bool deterministic, size_t bytes) {
  return {algo, true, false, deterministic, true, bytes};
}

TEST(AlgoChoice, DeterministicOptionDecidesWhetherAtomicsAlgorithmsMayWin) {
  // cuDNN's first guess uses atomics (e.g. backward-filter ALGO_0), the second does not.
  const std::vector<AlgoCandidate> list = {ok(0, false, 0), ok(1, true, 1 << 20)};
  std::string why;
  EXPECT_EQ(choose_algo(list, {true, size_t{256} << 20}, &why), 1);
  EXPECT_EQ(choose_algo(list, {false, size_t{256} << 20}, &why), 0);
}

TEST(AlgoChoice, SkipsFailedTf32AndOversizedCandidatesInOrder) {
  AlgoCandidate failed = ok(5, true, 0);
  failed.succeeded = false;
  AlgoCandidate unknown = ok(6, true, 0);
  unknown.workspace_known = false;
  AlgoCandidate tf32 = ok(7, true, 0);
  tf32.tensor_op = true;
  const AlgoCandidate fft = ok(4, true, size_t{3} << 30);  // 3 GiB
  const std::vector<AlgoCandidate> list = {failed, unknown, tf32, fft, ok(1, true, 4096)};
  std::string why;
  EXPECT_EQ(choose_algo(list, {true, size_t{256} << 20}, &why), 4);
  EXPECT_EQ(choose_algo(list, {true, size_t{4} << 30}, &why), 3);  // a larger cap takes FFT
}

TEST(AlgoChoice, NoneLeftSaysWhatExcludedThem) {
  const std::vector<AlgoCandidate> list = {ok(0, false, 0), ok(2, true, size_t{1} << 30)};
  std::string why;
  EXPECT_EQ(choose_algo(list, {true, size_t{256} << 20}, &why), -1);
  EXPECT_NE(why.find("1 not deterministic (option deterministic=0"), std::string::npos) << why;
  EXPECT_NE(why.find("1 over the workspace limit of 256 MiB"), std::string::npos) << why;
  EXPECT_EQ(choose_algo({}, {false, 0}, &why), -1);
}

}  // namespace
}  // namespace dlrt::cuda
