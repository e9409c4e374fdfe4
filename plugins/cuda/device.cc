// device.cc: which GPUs there are, what each one is, and opening one.
//
// Enumeration goes through CUDA itself (cudaGetDeviceCount), so CUDA_VISIBLE_DEVICES is
// honoured exactly as every CUDA program honours it: ordinal k here is the k-th GPU CUDA
// shows, which is /device:GPU:k. The answer is decided once per plugin instance; a machine
// without a driver or a GPU gets UNAVAILABLE with the CUDA error, and the driver and runtime
// versions, in the message.
//
// Describing a device never makes it current: cudaSetDevice creates a context (hundreds of
// MiB of device memory), and plugin.h says descriptions do not open devices. The properties
// calls used here (cudaGetDeviceProperties, cudaDeviceGetAttribute, cudaDeviceGetPCIBusId)
// need no context.
#include <cublas_api.h>
#include <cudnn_graph.h>
#include <nccl.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda_plugin.hpp"

namespace dlrt::cuda {
namespace {

// 13000 -> "13.0"; CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

Enumeration enumerate() {
  Enumeration e;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();  // do not leave the failure behind as this thread's last error
  if (err == cudaSuccess && count > 0) {
    e.ok = true;
    e.count = count;
    return e;
  }
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  (void)cudaRuntimeGetVersion(&runtime);
  e.reason = "cuda: no CUDA device: ";
  e.reason += err != cudaSuccess ? describe_cuda(err) : "cudaGetDeviceCount found 0 devices";
  e.reason +=
      "; driver " + (driver == 0 ? std::string("0 (none installed)") : cuda_version_string(driver));
  e.reason += ", runtime " + cuda_version_string(runtime);
  if (driver != 0 && driver / 1000 < runtime / 1000)
    e.reason +=
        "; install an NVIDIA driver for CUDA " + std::to_string(runtime / 1000) + " or newer";
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    e.reason +=
        std::string("; CUDA_VISIBLE_DEVICES='") + visible + "' selects which GPUs CUDA shows";
  return e;
}

// FP32 lanes (CUDA cores) per multiprocessor: the arithmetic-instructions throughput table of
// the CUDA C++ Programming Guide. GP100 (6.0), Volta/Turing (7.x) and A100 (8.0) have 64;
// every other architecture CUDA 13 supports, Hopper (9.0, H100/H200) included, has 128.
int fp32_lanes_per_sm(int major, int minor) {
  if ((major == 6 && minor == 0) || major == 7 || (major == 8 && minor == 0)) return 64;
  return 128;
}

// An attribute CUDA may not know on every platform: 0 when it fails (and the failure cleared).
int attribute_or_zero(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

dlrt_attr int_attr(const char* name, int64_t value, int32_t type = DLRT_ATTR_INT) {
  dlrt_attr a{};
  a.struct_size = sizeof(dlrt_attr);
  a.name = name;
  a.type = type;
  a.i = value;
  return a;
}

std::unique_ptr<DeviceInfo> describe(dlrt_plugin* plugin, int ordinal) {
  auto info = std::make_unique<DeviceInfo>();
  std::string where = "describing GPU:" + std::to_string(ordinal);
  cudaDeviceProp prop{};
  CUDA_CHECK_MSG(cudaGetDeviceProperties(&prop, ordinal), where);

  info->name = prop.name;
  char uuid[64];
  const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  info->uuid = uuid;  // the form nvidia-smi -L prints
  char bus[64] = {0};
  CUDA_CHECK_MSG(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal), where);
  info->pci_bus_id = bus;  // "0000:3b:00.0": domain:bus:device.function, as sysfs spells it
  for (char& c : info->pci_bus_id)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));

  int driver = 0, runtime = 0;
  CUDA_CHECK_MSG(cudaDriverGetVersion(&driver), where);
  CUDA_CHECK_MSG(cudaRuntimeGetVersion(&runtime), where);
  info->driver_version =
      "CUDA driver " + cuda_version_string(driver) + ", runtime " + cuda_version_string(runtime);
  info->library_versions = plugin->library_versions;

  // CUDA 13 removed cudaDeviceProp::clockRate and ::memoryClockRate; the attributes remain.
  // Both are peak clocks in kHz. Unknown (0) makes the dependent cost hint 0 = unknown.
  const int clock_khz = attribute_or_zero(cudaDevAttrClockRate, ordinal);
  const int mem_clock_khz = attribute_or_zero(cudaDevAttrMemoryClockRate, ordinal);
  const int lanes = fp32_lanes_per_sm(prop.major, prop.minor);

  dlrt_device_desc& d = info->desc;
  d.struct_size = sizeof(dlrt_device_desc);
  d.device_class = DLRT_DEVICE_CLASS_GPU;
  d.ordinal = ordinal;
  d.type = "GPU";
  d.name = info->name.c_str();
  d.vendor = "NVIDIA";
  d.pci_bus_id = info->pci_bus_id.c_str();
  d.uuid = info->uuid.c_str();
  d.compute_capability_major = prop.major;
  d.compute_capability_minor = prop.minor;
  d.core_count = prop.multiProcessorCount;
  d.memory_total = prop.totalGlobalMem;
  d.driver_version = info->driver_version.c_str();
  d.library_versions = info->library_versions.c_str();
  // Peak FP32: one fused multiply-add (2 flops) per lane per clock.
  // H200: 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s.
  d.peak_gflops = double(prop.multiProcessorCount) * lanes * 2.0 * clock_khz / 1e6;
  // DRAM: clock x bus width in bytes x 2 (double data rate). An estimate of the peak: HBM's
  // reported clock understates some parts (H200: 4.0 TB/s computed, 4.8 TB/s on paper).
  d.memory_bandwidth_gbps = double(mem_clock_khz) * 1e3 * (prop.memoryBusWidth / 8.0) * 2.0 / 1e9;
  // Host-side cudaLaunchKernel plus the GPU's dispatch: a few microseconds per kernel, which
  // is why CUDA Graph replay (capture table) pays off for small steps.
  d.launch_overhead_us = 3.0;

  info->attrs = {
      int_attr("l2_cache_bytes", prop.l2CacheSize),
      int_attr("shared_memory_per_block", int64_t(prop.sharedMemPerBlock)),
      int_attr("shared_memory_per_block_optin", int64_t(prop.sharedMemPerBlockOptin)),
      int_attr("shared_memory_per_multiprocessor", int64_t(prop.sharedMemPerMultiprocessor)),
      int_attr("registers_per_block", prop.regsPerBlock),
      int_attr("warp_size", prop.warpSize),
      int_attr("max_threads_per_block", prop.maxThreadsPerBlock),
      int_attr("max_threads_per_multiprocessor", prop.maxThreadsPerMultiProcessor),
      int_attr("fp32_lanes_per_multiprocessor", lanes),
      int_attr("clock_khz", clock_khz),
      int_attr("memory_clock_khz", mem_clock_khz),
      int_attr("memory_bus_width_bits", prop.memoryBusWidth),
      int_attr("async_engine_count", prop.asyncEngineCount),
      int_attr("cuda_driver_version", driver),
      int_attr("cuda_runtime_version", runtime),
      int_attr("ecc_enabled", prop.ECCEnabled != 0, DLRT_ATTR_BOOL),
      int_attr("integrated", prop.integrated != 0, DLRT_ATTR_BOOL),
  };
  for (const dlrt_attr& a : info->attrs) info->attr_ptrs.push_back(&a);
  d.num_attrs = info->attr_ptrs.size();
  d.attrs = info->attr_ptrs.data();
  return info;
}

void check_ordinal(dlrt_plugin* plugin, int32_t ordinal) {
  const int32_t count = device_count_or_throw(plugin);
  if (ordinal < 0 || ordinal >= count)
    plugin::fail(DLRT_NOT_FOUND, "cuda: no device with ordinal " + std::to_string(ordinal) +
                                     " (CUDA shows " + std::to_string(count) + ": 0.." +
                                     std::to_string(count - 1) + ")");
}

}  // namespace

std::string library_versions() {
  // cuDNN 9 encodes 10000 * major + 100 * minor + patch (cuDNN 8: 1000 * major + ...).
  const size_t dnn = cudnnGetVersion();
  const size_t dnn_major = dnn >= 90000 ? dnn / 10000 : dnn / 1000;
  const size_t dnn_minor = dnn >= 90000 ? (dnn % 10000) / 100 : (dnn % 1000) / 100;
  std::string s = "cuDNN " + std::to_string(dnn_major) + "." + std::to_string(dnn_minor) + "." +
                  std::to_string(dnn % 100);
  int blas[3] = {0, 0, 0};
  const libraryPropertyType parts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  bool blas_ok = true;
  for (int i = 0; i < 3; ++i)
    blas_ok = blas_ok && cublasGetProperty(parts[i], &blas[i]) == CUBLAS_STATUS_SUCCESS;
  s += blas_ok ? ", cuBLAS " + std::to_string(blas[0]) + "." + std::to_string(blas[1]) + "." +
                     std::to_string(blas[2])
               : std::string(", cuBLAS (version unknown)");
  // NCCL encodes 10000 * major + 100 * minor + patch since 2.9 (1000 * major + ... before).
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    const int big = nccl >= 10000 ? 10000 : 1000;
    s += ", NCCL " + std::to_string(nccl / big) + "." + std::to_string((nccl % big) / 100) + "." +
         std::to_string(nccl % 100);
  } else {
    s += ", NCCL (version unknown)";
  }
  return s;
}

int32_t device_count_or_throw(dlrt_plugin* plugin) {
  std::call_once(plugin->enumerated, [&] { plugin->enumeration = enumerate(); });
  if (!plugin->enumeration.ok) plugin::fail(DLRT_UNAVAILABLE, plugin->enumeration.reason);
  return plugin->enumeration.count;
}

dlrt_status* device_count(dlrt_plugin* plugin, int32_t* out_count) noexcept {
  return plugin::guard([&] {
    plugin::require(out_count, "out_count");
    *out_count = 0;
    *out_count = device_count_or_throw(plugin::require(plugin, "plugin"));
  });
}

const DeviceInfo& device_info(dlrt_plugin* plugin, int32_t ordinal) {
  check_ordinal(plugin, ordinal);
  std::lock_guard<std::mutex> lock(plugin->mu);
  if (plugin->infos.size() < size_t(plugin->enumeration.count))
    plugin->infos.resize(plugin->enumeration.count);
  auto& info = plugin->infos[ordinal];
  if (!info) info = describe(plugin, ordinal);  // once; the strings live until destroy
  return *info;
}

dlrt_status* device_get_desc(dlrt_plugin* plugin, int32_t ordinal, dlrt_device_desc* out) noexcept {
  return plugin::guard([&] {
    plugin::require(plugin, "plugin");
    plugin::require(out, "out");
    plugin::write_versioned(out, device_info(plugin, ordinal).desc, "out");
  });
}

dlrt_status* device_open(dlrt_plugin* plugin, int32_t ordinal, dlrt_device** out_device) noexcept {
  return plugin::guard([&] {
    plugin::require(out_device, "out_device");
    *out_device = nullptr;
    plugin::require(plugin, "plugin");
    check_ordinal(plugin, ordinal);
    auto d = std::make_unique<dlrt_device>();
    d->plugin = plugin;
    d->ordinal = ordinal;
    d->label = "GPU:" + std::to_string(ordinal);
    // Creates the device's primary context now (CUDA 12+ does so in cudaSetDevice), so a
    // device that cannot be used (busy, out of memory) fails here rather than on first use.
    set_device(ordinal);
    *out_device = d.release();
  });
}

void device_close(dlrt_device* device) noexcept {
  plugin::guard_void("device_close", [&] {
    if (device == nullptr) return;
    if (!device->padded.empty())
      plugin::log(DLRT_LOG_WARNING, "cuda: " + device->label + " closed with " +
                                        std::to_string(device->padded.size()) +
                                        " over-aligned allocation(s) not freed");
    // The primary context stays: it belongs to the process and is shared with other users
    // of the same GPU (cuDNN, cuBLAS, the host application).
    delete device;
  });
}

}  // namespace dlrt::cuda
