#!/usr/bin/env python3
"""Test accuracy of each sampler (neighbour sampling, LABOR-0, LABOR-1, LABOR-*) with the recipe
of bench/multistage_accuracy.sh (2 layers, hidden 64, fanouts 10,10, batches of 32, 30 epochs),
mean and standard deviation over seeds, on a dataset imported from .npy (datasets/cora.npz).
Prints one JSON line per model and sampler.

    bench/sampler_accuracy.py NPY [--models sage,gcn] [--seeds 10] [--strata build/strata]
                              [--ranks N]

With --ranks N every run is `mpirun -np N strata train ... --threads 1` (data-parallel: the same
batch of 32 split among the ranks), for comparison with the one-process runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

SAMPLERS = {
    "neighbor": [],
    "labor-0": ["--sampler", "labor"],
    "labor-1": ["--sampler", "labor", "--labor-importance", "1"],
    "labor-star": ["--sampler", "labor", "--labor-importance", "star"],
}
RECIPE = ["--layers", "2", "--hidden", "64", "--fanouts", "10,10", "--batch-size", "32",
          "--epochs", "30", "--lr", "0.01", "--dropout", "0.5", "--weight-decay", "5e-4",
          "--row-normalize", "--feature-store", "memory", "--memory-budget", "512M",
          "--eval-every", "0"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("npy")
    p.add_argument("--models", default="sage,gcn")
    p.add_argument("--samplers", default=",".join(SAMPLERS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--strata", default="build/strata")
    p.add_argument("--ranks", type=int, default=0, help="run under mpirun with this many ranks")
    args = p.parse_args()
    launch = []
    if args.ranks:
        launch = ["mpirun", "--oversubscribe", "-np", str(args.ranks)]
        if os.geteuid() == 0:
            launch.insert(1, "--allow-run-as-root")
    with tempfile.TemporaryDirectory() as work:
        dataset = os.path.join(work, "in")
        subprocess.run([args.strata, "import", dataset, "--npy", args.npy], check=True,
                       stdout=subprocess.DEVNULL)
        metrics = os.path.join(work, "m.jsonl")
        for model in args.models.split(","):
            for sampler in args.samplers.split(","):
                accs = []
                for seed in range(1, args.seeds + 1):
                    threads = ["--threads", "1"] if args.ranks else []
                    subprocess.run([*launch, args.strata, "train", dataset, "--model", model,
                                    *RECIPE, *SAMPLERS[sampler], *threads, "--seed", str(seed),
                                    "--metrics-out", metrics], check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    with open(metrics) as f:
                        accs.append(json.loads(f.readlines()[-1])["test_acc"])
                print(json.dumps({"dataset": os.path.basename(args.npy), "model": model,
                                  "sampler": sampler, "ranks": args.ranks or 1, "test_acc_mean": round(statistics.mean(accs), 4),
                                  "test_acc_std": round(statistics.stdev(accs), 4),
                                  "seeds": len(accs)}), flush=True)


if __name__ == "__main__":
    main()
