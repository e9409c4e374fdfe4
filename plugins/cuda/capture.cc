// capture.cc: the optional capture table, over CUDA Graphs.
//
//   capture_begin(s)   cudaStreamBeginCapture(s, thread-local): work enqueued on s is now
//                      recorded, not run;
//   capture_end(s, g)  cudaStreamEndCapture + cudaGraphInstantiate: g replays that work;
//   graph_launch(g, s) one replay of all of it, as a single launch on s;
//   graph_destroy(g).
//
// Why it matters: a training step of the reference workload is dozens of small kernels, each
// paying a few microseconds of launch overhead; one graph launch pays it once.
//
// Rules CUDA imposes, which the host's executor follows:
//   - capture_begin and capture_end are called from the same thread. Thread-local mode means
//     only that thread is barred from calls that are unsafe during a capture (cudaMalloc,
//     synchronising the legacy stream); other host threads carry on as usual;
//   - while capturing, nothing may synchronise the captured stream and kernels may not
//     allocate (kernel_run never does). Synchronous copies (stream NULL) run at once on the
//     per-thread stream and are not part of the graph;
//   - pointers are baked into the graph: replays read and write the same buffers, so the
//     host keeps them allocated for the graph's lifetime and refreshes their contents between
//     replays.
#include <memory>
#include <string>

#include "cuda_plugin.hpp"

struct dlrt_graph_exec {
  dlrt_device* device = nullptr;
  cudaGraphExec_t exec = nullptr;
};

namespace dlrt::cuda {
namespace {

cudaStreamCaptureStatus capture_status(dlrt_stream* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK_MSG(cudaStreamIsCapturing(stream->stream, &status), stream->device->label);
  return status;
}

dlrt_status* capture_begin(dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    plugin::require(stream, "stream");
    set_device(stream->device->ordinal);
    if (capture_status(stream) != cudaStreamCaptureStatusNone)
      plugin::fail(DLRT_FAILED_PRECONDITION, "cuda: capture_begin: the stream on " +
                                                 stream->device->label +
                                                 " is already capturing; capture_end it first");
    CUDA_CHECK_MSG(cudaStreamBeginCapture(stream->stream, cudaStreamCaptureModeThreadLocal),
                   stream->device->label + " capture_begin");
  });
}

dlrt_status* capture_end(dlrt_stream* stream, dlrt_graph_exec** out_graph) noexcept {
  return plugin::guard([&] {
    plugin::require(out_graph, "out_graph");
    *out_graph = nullptr;
    plugin::require(stream, "stream");
    set_device(stream->device->ordinal);
    const std::string where = stream->device->label + " capture_end";
    if (capture_status(stream) == cudaStreamCaptureStatusNone)
      plugin::fail(DLRT_FAILED_PRECONDITION, "cuda: capture_end: the stream on " +
                                                 stream->device->label +
                                                 " is not capturing; capture_begin it first");
    // An invalidated capture (something illegal happened while recording) still ends the
    // capture here, with cudaErrorStreamCaptureInvalidated and no graph.
    cudaGraph_t graph = nullptr;
    CUDA_CHECK_MSG(cudaStreamEndCapture(stream->stream, &graph), where);
    // The instantiated executable is independent of the graph it came from.
    std::unique_ptr<CUgraph_st, cudaError_t (*)(cudaGraph_t)> owned(graph, &cudaGraphDestroy);
    auto g = std::make_unique<dlrt_graph_exec>();
    g->device = stream->device;
    CUDA_CHECK_MSG(cudaGraphInstantiate(&g->exec, graph, 0), where);
    *out_graph = g.release();
  });
}

dlrt_status* graph_launch(dlrt_graph_exec* graph, dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    plugin::require(graph, "graph");
    plugin::require(stream, "stream");
    check_same_device(graph->device, stream, "graph_launch");
    set_device(stream->device->ordinal);
    CUDA_CHECK_MSG(cudaGraphLaunch(graph->exec, stream->stream),
                   stream->device->label + " graph_launch");
  });
}

void graph_destroy(dlrt_graph_exec* graph) noexcept {
  plugin::guard_void("graph_destroy", [&] {
    if (graph == nullptr) return;
    std::unique_ptr<dlrt_graph_exec> owned(graph);
    set_device(graph->device->ordinal);
    CUDA_CHECK_MSG(cudaGraphExecDestroy(graph->exec), graph->device->label + " graph_destroy");
  });
}

}  // namespace

const dlrt_capture_api* capture_table() {
  static const dlrt_capture_api table = [] {
    dlrt_capture_api t{};
    t.struct_size = sizeof(dlrt_capture_api);
    t.capture_begin = &capture_begin;
    t.capture_end = &capture_end;
    t.graph_launch = &graph_launch;
    t.graph_destroy = &graph_destroy;
    return t;
  }();
  return &table;
}

}  // namespace dlrt::cuda
