// dlbench: the benchmark driver (DESIGN.md §9). Prints JSON on stdout so every change can be
// measured the same way; errors go to stderr with exit status 1.
//
//   dlbench ops --device CPU:0 [--repeat N] [--threads T] [--filter conv2]
//       micro-benchmarks of the reference workload's ops at its exact shapes (ops.cc)
//
// Links only libdlrt (plus header-only CLI11 and nlohmann-json); plugins are found at run time.
#include <CLI/CLI.hpp>

#include <iostream>

#include "bench.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dlbench: the reference workload and op micro-benchmarks, JSON out"};
  app.require_subcommand(1);

  dlbench::OpsOptions ops;
  CLI::App* ops_cmd = app.add_subcommand("ops", "time the reference workload's ops at its shapes (eager, kernels cached)");
  ops_cmd->add_option("--device", ops.device, "device spec, e.g. CPU:0, /GPU:0")->capture_default_str();
  ops_cmd->add_option("--repeat", ops.repeat, "timed samples per op (median and min are printed)")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  ops_cmd->add_option("--threads", ops.threads, "cpu plugin threads (0: every core)")->capture_default_str();
  ops_cmd->add_option("--filter", ops.filter, "only the cases whose name contains this text");

  CLI11_PARSE(app, argc, argv);
  try {
    dlbench::json doc;
    if (ops_cmd->parsed()) doc = dlbench::run_ops(ops);
    std::cout << doc.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dlbench: " << e.what() << std::endl;
    return 1;
  }
}
