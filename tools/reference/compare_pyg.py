#!/usr/bin/env python3
"""Accuracy of PyG's layers on Strata's batches (examples/train_pyg.py) beside `strata train`
with the same model and recipe, on Cora, over seeds: one markdown row per model.

Usage: compare_pyg.py --strata build/strata --python PYTHON [--seeds 10] [--models sage gat]
PYTHON must import torch_geometric and strata (e.g. the test venv with PYTHONPATH set).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_strata import COMMON, RECIPE_FLAGS  # noqa: E402  (the recipes' flags)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def strata_acc(strata, dataset, model, seed, tmp):
    metrics = os.path.join(tmp, "metrics.jsonl")
    subprocess.run([strata, "train", dataset, *RECIPE_FLAGS[model], *COMMON, "--epochs", "200",
                    "--seed", str(seed), "--row-normalize", "--metrics-out", metrics],
                   check=True, stdout=subprocess.DEVNULL)
    return json.loads(open(metrics).read().splitlines()[-1])["final_test_acc"]


def pyg_acc(python, dataset, model, seed):
    out = subprocess.run([python, os.path.join(REPO, "examples", "train_pyg.py"), dataset,
                          "--model", model, "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["test_acc"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--models", nargs="+", default=["sage", "gat"])
    a = ap.parse_args()
    print("| model | strata train test acc | train_pyg.py test acc | Δ (points) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="strata-pyg-") as tmp:
        dataset = os.path.join(tmp, "cora")
        subprocess.run([a.strata, "import", dataset, "--npy",
                        os.path.join(REPO, "datasets", "cora.npz")], check=True,
                       stdout=subprocess.DEVNULL)
        for model in a.models:
            ours = [strata_acc(a.strata, dataset, model, s, tmp) for s in range(a.seeds)]
            theirs = [pyg_acc(a.python, dataset, model, s) for s in range(a.seeds)]
            m1, m2 = statistics.fmean(ours), statistics.fmean(theirs)
            print(f"| {model} | {100 * m1:.2f} ± {100 * statistics.stdev(ours):.2f} "
                  f"| {100 * m2:.2f} ± {100 * statistics.stdev(theirs):.2f} "
                  f"| {100 * (m2 - m1):+.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
