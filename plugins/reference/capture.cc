// capture.cc: the reference plugin's capture table — a CPU-side test double of CUDA Graphs.
//
// What it is for: the executor's capture logic (capture on the second run, replay after,
// never while profiling, one device only, random ops reading their offset through device
// memory) is exercised by tests on any machine. It is off unless the plugin instance was
// created with option capture=1 (plugin.cc): capture_begin then answers UNIMPLEMENTED, which
// a host of ABI >= 1.1 takes as "run uncaptured", so every other test of this plugin runs as
// before.
//
// How it models CUDA (plugins/cuda/capture.cc):
//   capture_begin(s)   s starts recording: every copy, memset, event record and kernel
//                      enqueued on it is checked as usual, then appended to a list of pieces
//                      of work, each holding its arguments by value as they were at enqueue
//                      time (kernels: a copy of dlrt_kernel_args and its pointer arrays),
//                      instead of being run. Like cudaStreamBeginCapture, nothing runs.
//   capture_end(s, g)  s stops recording; g owns the list (cudaStreamEndCapture +
//                      cudaGraphInstantiate).
//   graph_launch(g, s) runs the list in order on s, synchronously (cudaGraphLaunch: one
//                      replay of the same pointers with the same frozen arguments). Launched
//                      on a capturing stream, the replay is itself recorded (a child graph).
//   graph_destroy(g)   frees the list.
// So a kernel argument the host changes after capture is NOT seen by replays — exactly the
// trap CUDA sets — while the contents of device memory are read at replay time: a random op
// whose args carry rng_offset_device draws with the offset the host wrote before the launch.
//
// Fault injection, option capture_fault=<n> (plugin.cc): the n-th capture_end of the
// instance ends the capture but fails with no graph, as cudaStreamEndCapture on an
// invalidated capture or a failed cudaGraphInstantiate does; the recorded work never runs.
//
// Rules it enforces, as CUDA does: one capture per stream at a time (FAILED_PRECONDITION);
// capture_end only on a capturing stream; stream_synchronize on a capturing stream fails
// (stream.cc); a graph replays only on a stream of its own device. The host keeps every
// kernel and buffer a graph uses alive until graph_destroy (plugin.h); replays do not
// re-check pointers.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reference.hpp"

// A captured, replayable list of stream work (the ABI's opaque handle, for this plugin).
struct dlrt_graph_exec {
  dlrt_device* device = nullptr;
  std::vector<dlrt::reference::Work> work;
};

namespace dlrt::reference {
namespace {

using plugin::fail;
using plugin::guard;

dlrt_status* capture_begin(dlrt_stream* stream) {
  return guard([&] {
    plugin::require(stream, "stream");
    const std::string& label = stream->device->dev->label;
    if (!stream->device->plugin->config.capture)
      fail(DLRT_UNIMPLEMENTED, prefix() + "capture is off on " + label +
                                   " (plugin option capture=1 turns the capture test double on)");
    if (stream->recording)
      fail(DLRT_FAILED_PRECONDITION, prefix() + "capture_begin: the stream on " + label +
                                         " is already capturing; capture_end it first");
    stream->recording = std::make_unique<std::vector<Work>>();
  });
}

dlrt_status* capture_end(dlrt_stream* stream, dlrt_graph_exec** out_graph) {
  if (out_graph != nullptr) *out_graph = nullptr;
  return guard([&] {
    plugin::require(out_graph, "out_graph");
    plugin::require(stream, "stream");
    if (!stream->recording)
      fail(DLRT_FAILED_PRECONDITION, prefix() + "capture_end: the stream on " +
                                         stream->device->dev->label +
                                         " is not capturing; capture_begin it first");
    std::unique_ptr<std::vector<Work>> recorded = std::move(stream->recording);
    const int64_t n = ++stream->device->plugin->capture_ends;
    if (n == stream->device->plugin->config.capture_fault)  // the recording is dropped
      fail(DLRT_INTERNAL, prefix() + "capture_end on " + stream->device->dev->label +
                              ": the graph could not be instantiated (injected fault "
                              "capture_fault=" +
                              std::to_string(n) + ")");
    auto graph = std::make_unique<dlrt_graph_exec>();
    graph->device = stream->device;
    graph->work = std::move(*recorded);
    *out_graph = graph.release();
  });
}

dlrt_status* graph_launch(dlrt_graph_exec* graph, dlrt_stream* stream) {
  return guard([&] {
    plugin::require(graph, "graph");
    plugin::require(stream, "stream");
    if (stream->device->dev != graph->device->dev)
      fail(DLRT_INVALID_ARGUMENT, prefix() + "graph_launch: the graph was captured on " +
                                      graph->device->dev->label + ", the stream belongs to " +
                                      stream->device->dev->label);
    run_or_record(stream, [graph] {
      for (const Work& w : graph->work) w();
    });
  });
}

void graph_destroy(dlrt_graph_exec* graph) {
  plugin::guard_void("graph_destroy", [&] { delete graph; });
}

}  // namespace

const dlrt_capture_api* capture_table(const dlrt_host_api* host) {
  static const dlrt_capture_api table = {
      .struct_size = sizeof(dlrt_capture_api),
      .capture_begin = capture_begin,
      .capture_end = capture_end,
      .graph_launch = graph_launch,
      .graph_destroy = graph_destroy,
  };
  // A 1.0 host would take capture_begin's UNIMPLEMENTED (capture off) as a failed run.
  return host != nullptr && host->abi_minor >= 1 ? &table : nullptr;
}

}  // namespace dlrt::reference
