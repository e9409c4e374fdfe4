// torch_run.cc: see torch_run.hpp.
#include "torch_run.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "shell.hpp"

namespace dlbench {

namespace fs = std::filesystem;

std::string run_command(const std::string& cmd) {
  const ShellRun r = run_shell(cmd, false);
  if (r.status != 0) throw std::runtime_error("'" + cmd + "' failed (" + r.how + ")");
  return r.out;
}

json run_twin_json(const std::string& cmd, const std::string& script_name) {
  const std::string out = run_command(cmd);
  try {
    return json::parse(out);
  } catch (const json::exception& e) {
    throw std::runtime_error("--compare-torch: " + script_name + " printed no JSON (" +
                             std::string(e.what()) + "): " + out.substr(0, 200));
  }
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {
bool imports_torch(const std::string& python) {
  return shell_status(quoted(python) + " -c 'import torch' >/dev/null 2>&1") == 0;
}
}  // namespace

// With --torch-venv DIR: DIR/bin/python, after making DIR a venv with torch from PyPI (or
// --torch-index-url) when it cannot import torch yet; pip's output goes to stderr, since
// stdout carries the JSON only. Without it: --python as given.
std::string torch_python(const TrainOptions& o) {
  if (o.torch_venv.empty()) return o.python;
  const std::string python = (fs::path(o.torch_venv) / "bin" / "python3").string();
  if (fs::exists(python) && imports_torch(python)) return python;
  std::fprintf(stderr, "dlbench: --torch-venv %s: installing torch with pip (once)\n",
               o.torch_venv.c_str());
  std::string cmd =
      "{ " + quoted(o.python) + " -m venv " + quoted(o.torch_venv) + " && " + quoted(python) +
      " -m pip install --upgrade pip && " + quoted(python) + " -m pip install torch" +
      (o.torch_index_url.empty() ? "" : " --index-url " + quoted(o.torch_index_url)) + "; } 1>&2";
  if (shell_status(cmd) != 0 || !imports_torch(python))
    throw std::runtime_error("--torch-venv " + o.torch_venv +
                             ": setting up a venv with torch failed (see pip's output above); "
                             "fix it by hand (" +
                             python + " -m pip install torch) or pass --python");
  return python;
}

// Checked before dlrt trains, so a missing torch costs no wait. Returns the script's path.
fs::path check_torch(const TrainOptions& o, const std::string& script_name) {
  if (!imports_torch(o.python))
    throw std::runtime_error("--compare-torch: " + o.python +
                             " cannot import torch; install it with: apt-get install "
                             "python3-torch, or let dlbench make a venv (--torch-venv DIR)");
  fs::path script = own_dir() / script_name;
  if (!fs::exists(script))
    throw std::runtime_error("--compare-torch: " + script.string() +
                             " is missing (it is copied "
                             "next to dlbench by the build and the install)");
  return script;
}

}  // namespace dlbench

namespace dlbench {

json run_twin_mode(const std::string& cmd, const std::string& script_name,
                   const std::string& mode) {
  // stderr is kept apart, so a failure's message can be kept as the reason. A twin that
  // cannot even start (no shell: the Windows build) is unavailable too, not the run's end.
  ShellRun r;
  try {
    r = run_shell(cmd, true);
  } catch (const std::runtime_error& e) {
    return {{"mode", mode}, {"unavailable", script_name + " (" + mode + "): " + e.what()}};
  }
  const std::string& out = r.out;
  const int status = r.status;
  std::string err = r.err;
  if (status == 0) {
    std::cerr << err;
    try {
      json doc = json::parse(out);
      doc["mode"] = mode;
      return doc;
    } catch (const json::exception& e) {
      return {{"mode", mode},
              {"unavailable", script_name + " printed no JSON (" + e.what() +
                                  "): " + out.substr(0, 200)}};
    }
  }
  // The last lines of stderr: a Python traceback ends with the exception and its message.
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  const size_t keep = 400;
  if (err.size() > keep) err = "..." + err.substr(err.size() - keep);
  const std::string& how = r.how;
  return {{"mode", mode},
          {"unavailable", script_name + " (" + mode + ") failed (" + how + "): " +
                              (err.empty() ? std::string("nothing on stderr") : err)}};
}

std::string best_anchor(const json& anchors) {
  std::string best;
  double best_s = 0;
  for (auto it = anchors.begin(); it != anchors.end(); ++it) {
    if (!it->contains("step_seconds")) continue;
    const double s = it->at("step_seconds").get<double>();
    if (best.empty() || s < best_s) {
      best = it.key();
      best_s = s;
    }
  }
  return best;
}

}  // namespace dlbench
