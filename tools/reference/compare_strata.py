#!/usr/bin/env python3
"""Trains Strata with the reference recipes and prints the parity table against the fixtures.

For every fixture in tests/fixtures/recipes (one dataset x model, recorded by
record_fixtures.py), builds the dataset with the fixture's own `strata` command line, trains
`strata train` full-batch with the same recipe for the fixture's seeds, and prints one
markdown row: Strata's and the reference's final test accuracy (mean ± standard error over
seeds, and the sample standard deviation), their difference, with --above the share of seeds
at or above that accuracy, and the largest gap between the two mean training-loss curves (each
smoothed over 10 epochs, relative to the reference). Full batch is the mini-batch path with
one batch of every training node and full neighbourhoods, or with --full-graph the full-graph
path. `--variant defaults` trains with what Strata did before the recipe options existed
(biases everywhere, weight decay on every parameter, ReLU), which shows what those options
change. Needs only the standard library: no torch.

Usage: compare_strata.py --strata build/strata [--fixtures DIR] [--only NAME...]
                         [--variant recipe|defaults] [--seeds N] [--full-graph] [--above ACC]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

# `strata train` flags of each reference recipe (train_reference.py's RECIPES).
RECIPE_FLAGS = {
    "gcn": ["--model", "gcn", "--hidden", "16", "--dropout", "0.5", "--input-dropout", "0.5",
            "--bias", "false", "--lr", "0.01", "--weight-decay", "5e-4",
            "--weight-decay-scope", "first-layer"],
    "sage": ["--model", "sage", "--hidden", "16", "--dropout", "0.5", "--input-dropout", "0.5",
             "--lr", "0.01", "--weight-decay", "5e-4"],
    "gat": ["--model", "gat", "--hidden", "8", "--heads", "8", "--out-heads", "1",
            "--dropout", "0.6", "--input-dropout", "0.6", "--attention-dropout", "0.6",
            "--activation", "elu", "--lr", "0.005", "--weight-decay", "5e-4"],
}
# What each recipe flag was before the recipe options: Strata's defaults.
DEFAULTS = {"--bias": "true", "--weight-decay-scope": "all", "--activation": "relu"}
COMMON = ["--layers", "2", "--eval-every", "1", "--threads", "2"]
# One batch of every training node with full neighbourhoods, or the full-graph path.
PATHS = {"minibatch": ["--fanouts=-1,-1", "--batch-size", "100000000", "--feature-store", "memory"],
         "fullgraph": ["--full-graph"]}


def flags(model, variant):
    f = list(RECIPE_FLAGS[model])
    if variant == "defaults":
        for i in range(0, len(f), 2):
            f[i + 1] = DEFAULTS.get(f[i], f[i + 1])
    return f


def smoothed(curve, window=10):
    return [statistics.fmean(curve[i:i + window]) for i in range(0, len(curve), window)]


def spread(values):
    """Mean, its standard error and the sample standard deviation."""
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), std / len(values) ** 0.5, std


def accuracy_text(values):
    mean, sem, std = spread(values)
    return f"{100 * mean:.2f} ± {100 * sem:.2f} (sd {100 * std:.1f})"


def share_text(values, above):
    return f"{sum(v >= above for v in values)} of {len(values)}"


def train(strata, dataset, fixture, seed, variant, path, tmp):
    metrics = os.path.join(tmp, "metrics.jsonl")
    cmd = [strata, "train", dataset, *flags(fixture["model"], variant), *COMMON, *PATHS[path],
           "--epochs", str(fixture["epochs"]), "--seed", str(seed), "--metrics-out", metrics]
    if fixture["recipe"]["row_normalize"]:
        cmd.append("--row-normalize")
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
    records = [json.loads(line) for line in open(metrics)]
    losses = [r["train_loss"] for r in records if r.get("event") != "final"]
    return losses, records[-1]


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True)
    ap.add_argument("--fixtures", default=os.path.join(repo, "tests", "fixtures", "recipes"))
    ap.add_argument("--datasets", default=os.path.join(repo, "datasets"))
    ap.add_argument("--only", nargs="+", help="fixture names, e.g. cora-gcn")
    ap.add_argument("--variant", choices=["recipe", "defaults"], default="recipe")
    ap.add_argument("--seeds", type=int, help="default: the fixture's")
    ap.add_argument("--full-graph", action="store_true",
                    help="train Strata's full-graph path instead of one full mini-batch")
    ap.add_argument("--above", type=float,
                    help="also print how many seeds end at or above this test accuracy (0-1)")
    a = ap.parse_args()
    strata_path = "fullgraph" if a.full_graph else "minibatch"
    share = f" Strata ≥ {a.above:g} | reference ≥ {a.above:g} |" if a.above is not None else ""
    print(f"| fixture | path | variant | Strata test acc | reference test acc | Δ (points) |{share}"
          " Strata best-val test acc | max loss-curve gap |")
    print("|---" * (10 if a.above is not None else 8) + "|")
    with tempfile.TemporaryDirectory(prefix="strata-parity-") as tmp:
        built = {}
        for path in sorted(glob.glob(os.path.join(a.fixtures, "*.json"))):
            name = os.path.basename(path)[:-5]
            if a.only and name not in a.only:
                continue
            fixture = json.load(open(path))
            # "strata COMMAND OUT ARGS..."
            command = fixture["dataset_command"].replace("{datasets}", a.datasets).split()
            key = " ".join(command)
            if key not in built:
                built[key] = os.path.join(tmp, f"data{len(built)}")
                subprocess.run([a.strata, command[1], built[key], *command[3:]], check=True,
                               stdout=subprocess.DEVNULL)
            seeds = range(a.seeds or len(fixture["final_test_acc"]))
            curves, finals, bests = [], [], []
            for seed in seeds:
                losses, final = train(a.strata, built[key], fixture, seed, a.variant, strata_path,
                                      tmp)
                curves.append(losses)
                finals.append(final["final_test_acc"])
                bests.append(final["best_test_acc"])
            strata_curve = smoothed([statistics.fmean(c) for c in zip(*curves)])
            ref_curve = smoothed(fixture["train_loss_mean"])
            gap = max(abs(s - r) / r for s, r in zip(strata_curve, ref_curve))
            theirs = fixture["final_test_acc"]
            shares = (f" {share_text(finals, a.above)} | {share_text(theirs, a.above)} |"
                      if a.above is not None else "")
            delta = statistics.fmean(finals) - statistics.fmean(theirs)
            print(f"| {name} | {strata_path} | {a.variant} | {accuracy_text(finals)} "
                  f"| {accuracy_text(theirs)} | {100 * delta:+.2f} |{shares} "
                  f"{accuracy_text(bests)} | {100 * gap:.1f}% |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
