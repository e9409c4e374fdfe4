#!/usr/bin/env python3
"""The CTest dlbench.infer_light_squeezenet's checker: reads the JSON `dlbench infer
--compare-ort --batch 1 2` printed for a model that fixes batch 1 and fails (exit 1, saying
what) unless both batches ran in both runtimes, batch 2 was rewritten from batch 1, the first
sample of batch 2 equals the batch-1 run, and dlrt's outputs match onnxruntime's. No timing
is checked (the machines are shared)."""
import json
import sys


def main():
    doc = json.load(open(sys.argv[1]))
    problems = []
    batches = {b["batch"]: b for b in doc["batches"]}
    if sorted(batches) != [1, 2]:
        problems.append("batches %s, expected [1, 2]" % sorted(batches))
    else:
        if batches[1]["rewritten_from_batch"] is not None:
            problems.append("batch 1 was rewritten; the model fixes batch 1")
        if batches[2]["rewritten_from_batch"] != 1:
            problems.append("batch 2 was not rewritten from batch 1")
        if not batches[2]["first_sample_vs_batch_1_max_abs_diff"] <= 1e-5:
            problems.append("batch 2's first sample differs from batch 1: %s" %
                            batches[2]["first_sample_vs_batch_1_max_abs_diff"])
        for b in batches.values():
            for side in ("dlrt", "onnxruntime"):
                t = b[side]
                if not (t["runs"] >= 2 and 0 < t["min_ms"] <= t["p50_ms"] <= t["p99_ms"]):
                    problems.append("batch %d %s timing is inconsistent: %s" % (b["batch"], side, t))
            for name, diff in b["outputs_max_abs_diff_vs_onnxruntime"].items():
                if not (isinstance(diff, float) and diff <= 1e-4):
                    problems.append("batch %d output %s vs onnxruntime: %s" % (b["batch"], name, diff))
    if problems:
        print("dlbench infer:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print("dlbench infer: batches 1 and 2 in dlrt and onnxruntime %s agree" % doc["onnxruntime"])


if __name__ == "__main__":
    main()
