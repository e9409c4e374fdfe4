// worker_env_test.cc: the launcher's environment (OpenMPI's, torchrun's, none) read through an
// injected lookup, and every bad value an INVALID_ARGUMENT naming the variable.
#include "distribute/worker_env.hpp"

#include <gtest/gtest.h>

#include "distribute/distribute_test_util.hpp"

namespace dlrt::core::distribute {
namespace {

using test::contains;
using test::error_of;
using test::FakeEnv;

TEST(WorkerEnv, NoLauncherIsWorkerZeroOfOne) {
  FakeEnv env;
  WorkerEnv w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_EQ(w.local_rank, 0);
  EXPECT_EQ(w.source, "");
}

TEST(WorkerEnv, OpenMpi) {
  FakeEnv env{{{"OMPI_COMM_WORLD_RANK", "3"},
               {"OMPI_COMM_WORLD_SIZE", "4"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}};
  WorkerEnv w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.size, 4);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.source, "OMPI_COMM_WORLD_*");
}

TEST(WorkerEnv, TorchrunNamesWhenOpenMpiIsAbsent) {
  FakeEnv env{{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}}};
  WorkerEnv w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.source, "RANK/WORLD_SIZE");
  // OpenMPI's win when both are there (mpirun sets its own; RANK may be left over).
  env.vars["OMPI_COMM_WORLD_RANK"] = "0";
  env.vars["OMPI_COMM_WORLD_SIZE"] = "3";
  w = read_worker_env(env.lookup());
  EXPECT_EQ(w.size, 3);
  EXPECT_EQ(w.local_rank, 0) << "the local rank comes from the same launcher (absent: 0)";
}

TEST(WorkerEnv, EmptyMeansUnset) {
  FakeEnv env{{{"RANK", ""}, {"WORLD_SIZE", ""}}};
  EXPECT_EQ(read_worker_env(env.lookup()).size, 1);
}

TEST(WorkerEnv, BadValuesNameTheVariable) {
  struct Case {
    std::map<std::string, std::string> vars;
    std::string expected;
  };
  const Case cases[] = {
      {{{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
       "OMPI_COMM_WORLD_RANK='one' is not a worker number"},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, "RANK='-1' is not a worker number"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2x"}}, "WORLD_SIZE='2x' is not a worker number"},
      {{{"RANK", " 1"}, {"WORLD_SIZE", "2"}}, "RANK=' 1'"},
      {{{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}}, "RANK='99999999999'"},
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK='2' is not below WORLD_SIZE='2'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE='0': expected at least 1 worker"},
      {{{"RANK", "0"}}, "RANK is set but WORLD_SIZE is not"},
      {{{"OMPI_COMM_WORLD_SIZE", "2"}},
       "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "5"}},
       "LOCAL_RANK='5' is not below WORLD_SIZE='2'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "a"}}, "LOCAL_RANK='a'"},
  };
  for (const Case& c : cases) {
    FakeEnv env{c.vars};
    auto [code, msg] = error_of([&] { read_worker_env(env.lookup()); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << c.expected;
    EXPECT_TRUE(contains(msg, c.expected)) << msg;
  }
}

TEST(WorkerEnv, SlurmWhenNoOtherLauncherIsThere) {
  FakeEnv env{{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}}};
  WorkerEnv w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 2);
  EXPECT_EQ(w.size, 4);
  EXPECT_EQ(w.source, "SLURM_PROCID/NTASKS");
  // mpirun inside a Slurm job: the job's variables are inherited; mpirun's own win.
  env.vars["OMPI_COMM_WORLD_RANK"] = "1";
  env.vars["OMPI_COMM_WORLD_SIZE"] = "2";
  w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
}

TEST(WorkerEnv, TfConfigNumbersTheChiefFirst) {
  const std::string cluster =
      R"({"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"]}, "task": )";
  FakeEnv env{{{"TF_CONFIG", cluster + R"({"type": "worker", "index": 1}})"}}};
  WorkerEnv w = read_worker_env(env.lookup());
  EXPECT_EQ(w.rank, 2);
  EXPECT_EQ(w.size, 3);
  EXPECT_EQ(w.source, "TF_CONFIG");
  env.vars["TF_CONFIG"] = cluster + R"({"type": "chief", "index": 0}})";
  EXPECT_EQ(read_worker_env(env.lookup()).rank, 0);
  // Beside a launcher it must agree with it.
  env.vars["OMPI_COMM_WORLD_RANK"] = "0";
  env.vars["OMPI_COMM_WORLD_SIZE"] = "3";
  EXPECT_EQ(read_worker_env(env.lookup()).source, "OMPI_COMM_WORLD_*");
  env.vars["OMPI_COMM_WORLD_SIZE"] = "2";
  auto [code, msg] = error_of([&] { read_worker_env(env.lookup()); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "OMPI_COMM_WORLD_* says worker 0 of 2, TF_CONFIG says worker 0 of 3"))
      << msg;
}

TEST(WorkerEnv, BadTfConfigsSayWhatIsWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not a JSON object"},
      {R"({"task": {"type": "worker", "index": 0}})", "no \"cluster\" object"},
      {R"({"cluster": {"worker": ["a:1"]}})", "no \"task\" object"},
      {R"({"cluster": {"worker": ["a:1"], "ps": ["p:1"]}, "task": {"type": "worker", "index": 0}})",
       "\"ps\" tasks"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}})",
       "task.index 1 is not below the 1 worker task(s)"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "evaluator", "index": 0}})",
       "is not worker or chief"},
      {R"({"cluster": {"worker": "a:1"}, "task": {"type": "worker", "index": 0}})",
       "cluster.worker is not a list"},
  };
  for (const auto& [json, expected] : cases) {
    FakeEnv env{{{"TF_CONFIG", json}}};
    auto [code, msg] = error_of([&] { read_worker_env(env.lookup()); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << json;
    EXPECT_TRUE(contains(msg, expected)) << msg;
  }
}

}  // namespace
}  // namespace dlrt::core::distribute
