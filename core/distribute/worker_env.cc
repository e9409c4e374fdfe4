// worker_env.cc: see worker_env.hpp.
#include "distribute/worker_env.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <optional>

#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

// The names of one launcher's variables.
struct Family {
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* label;
};

constexpr Family kOpenMpi = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_*"};
constexpr Family kTorchrun = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK/WORLD_SIZE"};
constexpr Family kSlurm = {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_PROCID/NTASKS"};

// The value of `name`, nullopt when unset or empty (how shells clear a variable).
std::optional<std::string> get(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// A decimal integer in [0, INT32_MAX]: digits only, no sign, no spaces.
int32_t parse_count(const char* name, const std::string& text) {
  bool digits = text.size() <= 10;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  const long long v = digits ? std::strtoll(text.c_str(), nullptr, 10) : -1;
  if (!digits || v > INT32_MAX)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}='{}' is not a worker number; expected a non-negative decimal integer",
                     name, text));
  return static_cast<int32_t>(v);
}

WorkerEnv read_family(const EnvLookup& env, const Family& f) {
  std::optional<std::string> rank = get(env, f.rank), size = get(env, f.size);
  if (!rank || !size)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{} is set but {} is not; a launcher sets both (rank {}, size {})",
                     rank ? f.rank : f.size, rank ? f.size : f.rank, rank ? *rank : "unset",
                     size ? *size : "unset"));
  WorkerEnv w;
  w.source = f.label;
  w.rank = parse_count(f.rank, *rank);
  w.size = parse_count(f.size, *size);
  if (w.size < 1)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}': expected at least 1 worker", f.size, *size));
  if (w.rank >= w.size)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}' is not below {}='{}'; expected 0 <= rank "
                                            "< size",
                                            f.rank, *rank, f.size, *size));
  if (std::optional<std::string> local = get(env, f.local_rank)) {
    w.local_rank = parse_count(f.local_rank, *local);
    if (w.local_rank >= w.size)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}' is not below {}='{}'; expected 0 <= "
                                              "local rank < size",
                                              f.local_rank, *local, f.size, *size));
  }
  return w;
}

// TensorFlow's TF_CONFIG: {"cluster": {"worker": [...], "chief": [...]}, "task": {"type":
// "worker", "index": i}}. Workers are numbered as TensorFlow numbers them: the chief (if any)
// first, then the workers in order. Other task types (ps, evaluator) are refused: dlrt's
// strategy is all-reduce between workers.
WorkerEnv read_tf_config(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Error(DLRT_INVALID_ARGUMENT,
                 fmt::format("TF_CONFIG: {}; expected TensorFlow's JSON {{\"cluster\": "
                             "{{\"worker\": [\"host:port\", ...]}}, \"task\": {{\"type\": "
                             "\"worker\", \"index\": i}}}}",
                             why));
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw bad("not a JSON object");
  if (!j.contains("cluster") || !j["cluster"].is_object()) throw bad("no \"cluster\" object");
  if (!j.contains("task") || !j["task"].is_object()) throw bad("no \"task\" object");
  const nlohmann::json& cluster = j["cluster"];
  const nlohmann::json& task = j["task"];
  auto count = [&](const char* type) -> int64_t {
    if (!cluster.contains(type)) return 0;
    if (!cluster[type].is_array()) throw bad(fmt::format("cluster.{} is not a list", type));
    return static_cast<int64_t>(cluster[type].size());
  };
  for (const auto& [type, _] : cluster.items())
    if (type != "worker" && type != "chief")
      throw bad(fmt::format("cluster has \"{}\" tasks; dlrt's workers all-reduce, with no "
                            "parameter servers or evaluators",
                            type));
  const int64_t chiefs = count("chief"), workers = count("worker");
  if (chiefs > 1) throw bad("more than one chief");
  if (chiefs + workers < 1) throw bad("no workers");
  if (!task.contains("type") || !task["type"].is_string()) throw bad("task.type is missing");
  if (!task.contains("index") || !task["index"].is_number_integer())
    throw bad("task.index is missing or not an integer");
  const std::string type = task["type"].get<std::string>();
  const int64_t index = task["index"].get<int64_t>();
  const int64_t of = type == "chief" ? chiefs : type == "worker" ? workers : -1;
  if (of < 0) throw bad(fmt::format("task.type \"{}\" is not worker or chief", type));
  if (index < 0 || index >= of)
    throw bad(fmt::format("task.index {} is not below the {} {} task(s)", index, of, type));
  WorkerEnv w;
  w.source = "TF_CONFIG";
  w.rank = static_cast<int32_t>(type == "chief" ? index : chiefs + index);
  w.size = static_cast<int32_t>(chiefs + workers);
  return w;
}

}  // namespace

WorkerEnv read_worker_env(const EnvLookup& env_in) {
  const EnvLookup env = env_in ? env_in : EnvLookup([](const char* n) { return std::getenv(n); });
  // The launcher that started this process: mpirun first (its variables are its own; Slurm's
  // may be inherited from the job around it), then torchrun, then srun.
  WorkerEnv launcher;
  for (const Family& f : {kOpenMpi, kTorchrun, kSlurm})
    if (get(env, f.rank) || get(env, f.size)) {
      launcher = read_family(env, f);
      break;
    }
  // TF_CONFIG says the same thing by hand: used alone, it must match a launcher that is there.
  if (std::optional<std::string> tf = get(env, "TF_CONFIG")) {
    const WorkerEnv t = read_tf_config(*tf);
    if (launcher.source.empty()) return t;
    if (t.rank != launcher.rank || t.size != launcher.size)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("the worker sources disagree: {} says worker {} of {}, TF_CONFIG says "
                       "worker {} of {}; unset TF_CONFIG or make it match the launcher",
                       launcher.source, launcher.rank, launcher.size, t.rank, t.size));
  }
  return launcher;
}

}  // namespace dlrt::core::distribute
