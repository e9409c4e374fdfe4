// worker_env.hpp: which worker of a multi-worker job this process is, read from the
// environment its launcher set (dlrt.h, "Distribution").
//
//   OpenMPI (mpirun):  OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   torchrun:          RANK, WORLD_SIZE, LOCAL_RANK
//   neither:           worker 0 of 1, local rank 0
//
// A family is chosen by its rank or size variable being set (OpenMPI's first); within it the
// rank and size must both be there, and the local rank may be missing (then 0). Values are
// plain decimal integers: size >= 1, 0 <= rank < size, 0 <= local rank < size. Anything else
// is INVALID_ARGUMENT naming the variable and its value, never a silent single-process run
// (a worker that believed it was alone would train on its own and never meet the others).
//
// This is the launcher's view only; the MPI transport checks it against MPI's own
// (plugins/mpi). Pure function of the lookup, so tests inject an environment.
#pragma once

#include <cstdint>
#include <string>

#include "settings.hpp"

namespace dlrt::core::distribute {

struct WorkerEnv {
  int32_t rank = 0;
  int32_t size = 1;
  int32_t local_rank = 0;
  // Where it came from, for messages: "OMPI_COMM_WORLD_*", "RANK/WORLD_SIZE" or "" (defaults).
  std::string source;
};

// `env` NULL means getenv. Throws Error(INVALID_ARGUMENT) as above.
WorkerEnv read_worker_env(const EnvLookup& env);

}  // namespace dlrt::core::distribute
