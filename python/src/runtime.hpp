// runtime.hpp: the Python package's one dlrt::Context, as TensorFlow has one runtime per
// process. tf.config's calls configure it before it starts; the first op, model or logical
// device listing starts it, and from then on its devices are fixed (TensorFlow raises
// RuntimeError for a change after that; dlrt/config.py does the same).
//
// Listing *physical* devices must not start it (the article lists GPUs, then hides some): that
// listing comes from a second context that sees every device (probe()), made once.
//
// Both contexts are held by shared_ptr: every Tensor and Model made from a context keeps it
// alive, so the order in which Python frees objects at exit never frees a context first.
#pragma once

#include <dlrt/dlrt.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace dlrt::python {

// What tf.config sets before the start, in dlrt's terms.
struct RuntimeConfig {
  // "CPU:0,GPU:1" (ContextOptions::visible_devices); unset = every device (or
  // DLRT_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES from the environment).
  std::optional<std::string> visible_devices;
  std::optional<bool> memory_growth;  // GPU arenas grow on demand (set_memory_growth)
  struct Split {
    std::string physical_device;   // as visibility numbers it: "CPU:0", "GPU:0"
    int32_t count = 1;             // logical devices made from it
    std::vector<uint64_t> limits;  // bytes, one per logical device; empty = none
  };
  std::vector<Split> logical;  // set_logical_device_configuration
  bool soft_placement = true;  // tf.config.set_soft_device_placement
};

class Runtime {
 public:
  // The process's runtime; never destroyed (tensors alive at interpreter exit keep their
  // context through shared_ptr, see above).
  static Runtime& instance();

  bool started() const { return context_ != nullptr; }
  // Replaces the configuration; FAILED_PRECONDITION once started.
  void configure(const RuntimeConfig& config);
  const RuntimeConfig& config() const { return config_; }
  // The runtime's context, started on the first call with the configuration.
  const std::shared_ptr<dlrt::Context>& context();
  // The started context's devices (device(i) of it), read once at the start; and the index
  // an op goes to when nothing asks for one (the first GPU-class device, else the first CPU).
  const std::vector<dlrt::DeviceInfo>& devices();
  size_t default_device();
  // The first device of type CPU (host memory: where NumPy arrays are wrapped in place).
  size_t host_device();
  // Whether device `index` keeps its memory on the host (attribute "host_memory"): NumPy
  // arrays are wrapped there without a copy, and tensors read in place.
  bool host_memory(size_t index);
  // A context that sees every device and loads every plugin, for list_physical_devices and
  // `python -m dlrt.probe`; it runs nothing.
  const std::shared_ptr<dlrt::Context>& probe();

  // At interpreter exit (atexit): the runtime lets go of its contexts. Each is destroyed when
  // the last tensor, model or strategy made from it goes too, during the interpreter's
  // teardown, which unloads the plugins (the mpi plugin finalizes MPI then, so mpirun sees a
  // clean exit). Nothing may use the runtime afterwards.
  void release();

  // tf.debugging.set_log_device_placement: eager ops print TensorFlow's line to stderr, and
  // models compiled afterwards log their placement.
  bool log_device_placement() const { return log_placement_.load(); }
  void set_log_device_placement(bool on) { log_placement_.store(on); }

 private:
  Runtime() = default;
  std::mutex mutex_;
  RuntimeConfig config_;
  std::shared_ptr<dlrt::Context> context_, probe_;
  std::vector<dlrt::DeviceInfo> devices_;
  std::vector<bool> host_memory_;
  size_t default_device_ = 0, host_device_ = 0;
  std::atomic<bool> log_placement_{false};
  bool released_ = false;
};

}  // namespace dlrt::python
