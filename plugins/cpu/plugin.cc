// plugin.cc: the cpu plugin's entry point, plugin_create (options, the oneDNN engine) and
// plugin_destroy.
//
// Options ("cpu:<key>=<value>" context options):
//   threads   0..4096, default 0 = every CPU this process may run on (its affinity mask):
//             the threads oneDNN primitives may use. Shown as the device attribute `threads`
//             and used by the peak estimate; kernels apply it around each
//             execution (OpenMP: openmp_runtime.hpp sets oneDNN's count on the calling thread), so it
//             never changes the threading of the rest of the process.
//   winograd  0, 1 or 2, default 1: 3x3 stride-1 NHWC convolutions whose channel counts in
//             and out are multiples of 16 (forward, backward data, backward filter) run as
//             Winograd F(4x4, 3x3) on AVX2+FMA CPUs, in 16-lane code on AVX-512 ones
//             (kernels/winograd_kernel.inc: 2-4x fewer multiplications, relative error
//             ~1e-6) where that is cheaper than oneDNN's direct kernel (wino::worth_it: enough
//             tiles to pay for the filter transform); where oneDNN runs AVX-512, forward 3x3
//             convolutions of more than 64 x 64 channel pairs run as oneDNN's own AVX-512
//             Winograd kernel (jit_wino_4x3) instead, when the filter is constant or the batch
//             large (kernels/prim_conv.cc, onednn_winograd_applies); 2 runs dlrt's Winograd wherever
//             it can (tests, comparisons); 0 keeps oneDNN's direct convolutions for every
//             shape (bit-for-bit what oneDNN gives, and the comparison dlbench measures against).
//   peak      "measured" (default) or "nominal": the device's peak_gflops is what FMA chains
//             in the ISA's widest registers reach on `threads` threads at plugin creation
//             (peak.hpp: ~3 ms tries until two agree, 2 to 8; checked against the nominal
//             in `peak_check`), or the nominal threads x clock x FLOP per cycle. Both are
//             attributes (`measured_peak_gflops`, `nominal_peak_gflops`) either way... the
//             measured one only when measured.
//   calibrate auto (default), redo or skip; DLRT_CPU_CALIBRATE when the option is absent:
//             where dlrt has a kernel of its own beside oneDNN's (Winograd 3x3 convolutions),
//             which one runs is measured on this CPU at creation and cached per CPU model,
//             ISA, oneDNN and plugin version and thread count in the user's cache folder
//             (auto: measured once, ~0.1-0.3 s, then read), measured again (redo), or left
//             to the fixed rules (skip: tests, build comparisons). calibration.hpp; the
//             device attributes `calibration` and `kernel_choices` say what was chosen and why.
#include <memory>
#include <string>

#include "cpu.hpp"
#include "dnnl_status.hpp"
#include "host_info.hpp"
#include "openmp_runtime.hpp"
#include "ops.hpp"

namespace dlrt::cpu {
namespace {

using plugin::guard;

constexpr const char* kName = "cpu";
constexpr const char* kPlatform = "onednn";

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) {
  if (out_plugin != nullptr) *out_plugin = nullptr;
  return guard([&] {
    pin_openmp_runtimes();
    plugin::require(out_plugin, "out_plugin");
    plugin::Options options(args, {"threads", "winograd", "peak", "calibrate"});
    const std::string twice = KernelRegistry::duplicate();
    if (!twice.empty())
      plugin::fail(DLRT_INTERNAL, "cpu: two kernel files register op '" + twice + "'");
    // Built in a unique_ptr, so a failure part way (bad option, out of memory) frees it.
    auto p = std::make_unique<dlrt_plugin>();
    const int cores = plugin::host::affinity_cpu_count();
    const long threads = options.get_int("threads", 0, 0, 4096);
    p->threads = threads == 0 ? cores : static_cast<int32_t>(threads);
    const long winograd = options.get_int("winograd", 1, 0, 2);
    p->winograd = winograd != 0;
    p->winograd_force = winograd == 2;
    const std::string peak = options.get("peak", "measured");
    if (peak != "measured" && peak != "nominal")
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   "cpu: option 'peak' is '" + peak + "', expected measured or nominal");
    p->measure_peak = peak == "measured";
    p->calibrate = calibration_mode(options.get("calibrate"));

    // The engine is the device. If oneDNN cannot make one, the plugin still loads and says
    // why from device_count (plugin.h), instead of failing to load.
    try {
      p->engine = dnnl_call("create the CPU engine (dnnl::engine(cpu, 0))", __FILE__, __LINE__,
                            [] { return dnnl::engine(dnnl::engine::kind::cpu, 0); });
    } catch (const plugin::Error& e) {
      if (e.code() == DLRT_RESOURCE_EXHAUSTED) throw;
      p->unavailable = e.what();
      plugin::log(DLRT_LOG_WARNING, p->unavailable);
    }
    build_desc(p.get());
    *out_plugin = p.release();
  });
}

void plugin_destroy(dlrt_plugin* plugin) {
  plugin::guard_void("plugin_destroy", [&] { delete plugin; });
}

}  // namespace
}  // namespace dlrt::cpu

// The one exported symbol. Phase one of loading: fill the table, touch nothing else (oneDNN is
// first used in plugin_create).
extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  namespace c = dlrt::cpu;
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = c::kName;
  return dlrt::plugin::guard([&] {
    dlrt::plugin::require(host, "host");
    dlrt::plugin::require(api, "api");
    static const dlrt_plugin_api filled = {
        .struct_size = sizeof(dlrt_plugin_api),
        .abi_major = DLRT_ABI_MAJOR,
        .abi_minor = DLRT_ABI_MINOR,
        .name = c::kName,
        .platform = c::kPlatform,
        .version = c::kPluginVersion,
        .plugin_create = c::plugin_create,
        .plugin_destroy = c::plugin_destroy,
        .device_count = c::device_count,
        .device_get_desc = c::device_get_desc,
        .device_open = c::device_open,
        .device_close = c::device_close,
        .memory_info = c::memory_info,
        .mem_alloc = c::mem_alloc,
        .mem_free = c::mem_free,
        .memcpy_h2d = c::memcpy_h2d,
        .memcpy_d2h = c::memcpy_d2h,
        .memcpy_d2d = c::memcpy_d2d,
        .memset = c::memset_device,
        .host_alloc_pinned = nullptr,  // device memory is host memory: nothing to pin
        .host_free_pinned = nullptr,
        .stream_create = c::stream_create,
        .stream_destroy = c::stream_destroy,
        .stream_synchronize = c::stream_synchronize,
        .event_create = c::event_create,
        .event_destroy = c::event_destroy,
        .event_record = c::event_record,
        .stream_wait_event = c::stream_wait_event,
        .event_synchronize = c::event_synchronize,
        .op_supported = c::op_supported,
        .kernel_create = c::kernel_create,
        .kernel_run = c::kernel_run,
        .kernel_destroy = c::kernel_destroy,
        .capture = nullptr,      // no graph capture: work runs at enqueue time
        .collectives = nullptr,  // multi-worker CPU collectives live in plugins/mpi
    };
    dlrt_plugin_api_fill(api, &filled);
  });
}
