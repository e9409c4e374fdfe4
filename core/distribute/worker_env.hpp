// worker_env.hpp: which worker of a multi-worker job this process is, read from the
// environment its launcher set (dlrt.h, "Distribution").
//
//   OpenMPI (mpirun):  OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   torchrun:          RANK, WORLD_SIZE, LOCAL_RANK
//   Slurm (srun):      SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
//   TensorFlow:        TF_CONFIG (JSON: cluster.chief + cluster.worker, task.type/index)
//   none:              worker 0 of 1, local rank 0
//
// A launcher family is chosen by its rank or size variable being set (OpenMPI's first, then
// torchrun's, then Slurm's: mpirun run inside a Slurm job inherits the job's variables); within it the
// rank and size must both be there, and the local rank may be missing (then 0). Values are
// plain decimal integers: size >= 1, 0 <= rank < size, 0 <= local rank < size. Anything else
// is INVALID_ARGUMENT naming the variable and its value, never a silent single-process run
// (a worker that believed it was alone would train on its own and never meet the others).
// TF_CONFIG is read too: alone it gives rank and size (the chief first, as TensorFlow numbers
// them); beside a launcher it must agree with it, else INVALID_ARGUMENT naming both. The
// transport between workers is still MPI: workers that TF_CONFIG names but no mpirun started
// are refused by the mpi plugin's check against MPI's own world (a clear error, not a hang).
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
  // Where it came from, for messages: "OMPI_COMM_WORLD_*", "RANK/WORLD_SIZE",
  // "SLURM_PROCID/NTASKS", "TF_CONFIG" or "" (defaults).
  std::string source;
};

// `env` NULL means getenv. Throws Error(INVALID_ARGUMENT) as above.
WorkerEnv read_worker_env(const EnvLookup& env);

}  // namespace dlrt::core::distribute
