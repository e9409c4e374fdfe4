// samples/placement: choosing devices by hand, letting placement choose, and seeing what it
// chose — dlrt's version of TensorFlow's tf.device and tf.debugging.set_log_device_placement
// examples (docs/placement.md has the rules).
//
//   1. manual placement: `DeviceScope on_cpu(g, "/CPU:0")` is `with tf.device('/CPU:0'):`;
//   2. soft placement: an op requested on a GPU this context does not show runs on the CPU
//      instead, and the placement log says why (fallback:device-missing);
//   3. strict placement: the same request is an error naming the op, the request and the
//      devices that could run it;
//   4. the placement log (TensorFlow's lines plus a reason) and the JSON / DOT dumps.
//
// The context shows only /device:CPU:0 (visible_devices), so the sample behaves the same on
// every machine, GPU or not; drop that option to see your own devices decide. Pass a folder
// as the first argument to also write placement.json and placement.dot there.
//
// Exit status 0 and the last line "placement sample: all checks passed" when the results and
// the placement are as expected (the CTest test checks the log lines and that line).
#include <dlrt/dlrt.hpp>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  try {
    dlrt::Context ctx(dlrt::ContextOptions().visible_devices("CPU:0"));
    dlrt::Graph g(ctx);

    // a: (2,3), b: (3,2); c = a @ b = [[22, -28], [49, -64]]; d = relu(c) = [[22, 0], [49, 0]].
    dlrt::Value a = g.constant<float>("a", {2, 3}, {1, 2, 3, 4, 5, 6});
    dlrt::Value b = g.constant<float>("b", {3, 2}, {1, -2, 3, -4, 5, -6});
    dlrt::Value c, d;
    {
      dlrt::DeviceScope on_cpu(g, "/CPU:0");  // 1. manual placement
      c = g.op1("matmul", {a, b}, {}, "c");
    }
    {
      dlrt::DeviceScope on_gpu(g, "/GPU:0");  // 2. no GPU is visible: soft placement moves it
      d = g.op1("relu", {c}, {}, "d");
    }

    // 4. The log goes to stderr while compiling, one line per placed node, as in TensorFlow.
    std::cout << "-- compiling with soft placement (the default) and the placement log on\n"
              << std::flush;
    dlrt::CompileOptions options;
    options.log_device_placement = true;  // TensorFlow's set_log_device_placement(True)
    // Every op here reads constants only, so the graph passes would compute c and d once at
    // compile (fold_constants) and place a constant: this sample is about where ops run, so it
    // compiles the graph as built.
    options.graph_passes = "none";
    dlrt::Executable soft = g.compile({}, {d}, options);
    std::cerr << std::flush;

    std::cout << "-- each node's placement through the API\n";
    bool c_ok = false, d_ok = false;
    for (size_t i = 0; i < soft.node_count(); ++i) {
      const dlrt::NodePlacement p = soft.node_placement(i);
      std::cout << "  " << p.name << " (" << p.op << ") requested '" << p.requested << "' -> "
                << p.assigned << " [" << p.reason << "]\n";
      if (p.name == "c") c_ok = p.op == "matmul" && p.reason == "explicit";
      if (p.name == "d") d_ok = p.op == "relu" && p.reason == "fallback:device-missing";
    }
    const bool placement_ok = c_ok && d_ok;

    std::vector<float> result = soft.run({}, 1).at(0).read<float>();
    bool values_ok = result.size() == 4;
    result.resize(4);
    const float expected[] = {22, 0, 49, 0};
    std::cout << "-- d = relu(a @ b) = [[" << result[0] << ", " << result[1] << "], [" << result[2]
              << ", " << result[3] << "]]\n";
    for (int i = 0; i < 4; ++i) values_ok = values_ok && std::fabs(result[i] - expected[i]) < 1e-5f;

    // 3. Strict placement refuses instead of moving the op.
    std::cout << "-- compiling again with strict placement\n";
    bool strict_ok = false;
    try {
      dlrt::CompileOptions strict;
      strict.soft_placement = false;
      strict.graph_passes = "none";
      g.compile({}, {d}, strict);
      std::cout << "  compiled (unexpected)\n";
    } catch (const dlrt::Error& e) {
      std::cout << "  " << e.what() << "\n";
      strict_ok = e.code() == DLRT_INVALID_ARGUMENT;
    }

    if (argc > 1) {
      const std::string dir = argv[1];
      std::ofstream(dir + "/placement.json") << soft.dump(DLRT_DUMP_JSON);
      std::ofstream(dir + "/placement.dot") << soft.dump(DLRT_DUMP_DOT);
      std::cout << "-- wrote " << dir << "/placement.json and placement.dot "
                << "(dot -Tsvg placement.dot > placement.svg)\n";
    }

    if (!(placement_ok && values_ok && strict_ok)) {
      std::cout << "placement sample: FAILED (placement " << placement_ok << ", values "
                << values_ok << ", strict " << strict_ok << ")\n";
      return 1;
    }
    std::cout << "placement sample: all checks passed\n";
    return 0;
  } catch (const dlrt::Error& e) {
    std::cout << "placement sample: FAILED: " << e.what() << "\n";
    return 1;
  }
}
