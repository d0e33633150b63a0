#!/usr/bin/python3
"""Records the reference training curves that Strata's trainer is checked against.

For every dataset below and each of its models (every model of train_reference.py unless the
dataset names some), builds the dataset with the given strata binary (in a temporary
directory), trains seeds 0..S-1 with the model's recipe and writes OUT/<dataset>-<model>.json:
the recipe, the per-epoch mean and standard deviation of the training loss, and the per-seed
final and best-validation accuracies. For a dataset with `locked_seeds` it also trains GCN from
Strata's own initial weights and full-graph dropout masks of each such seed (strata_streams.py)
and writes OUT/locked/<dataset>-gcn-seed<S>.json: that run's loss at every epoch and its final
accuracies, which Strata's full-graph path must reproduce up to float rounding.

Usage: record_fixtures.py --strata build/strata --out tests/fixtures/recipes [--seeds N]
                          [--only DATASET ...] [--models MODEL ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_reference as ref  # noqa: E402  (needs the path above)

# How each dataset is made: `strata COMMAND OUT ARGS...`, with {datasets} standing for the
# repository's datasets/ directory. A C++ test that compares against a fixture builds its dataset
# from the same command line, so this table is the one place where it is written down.
DATASETS = {
    # Cora with the papers' preprocessing: features divided by their row sums.
    "cora": {"command": "import", "args": ["--npy", "{datasets}/cora.npz"], "row_normalize": True},
    # The same graph with the raw 0/1 bag-of-words features.
    "cora-raw": {"command": "import", "args": ["--npy", "{datasets}/cora.npz"], "row_normalize": False},
    # A generated SBM with raw bag-of-words features, as co-purchase graphs have them: 767
    # binary values per row, 40 of them ones, drawn from class-dependent word distributions.
    "binary": {"command": "generate",
               "args": ["--nodes", "4000", "--avg-degree", "10", "--homophily", "0.7",
                        "--feature-dim", "767", "--binary-features", "40", "--classes", "10",
                        "--train-ratio", "0.6", "--val-ratio", "0.2", "--test-ratio", "0.2",
                        "--seed", "7"],
               "row_normalize": False},
    # A proxy of a public co-purchase graph (13,752 nodes, 491,722 directed edges, in-degree
    # mean 36, max 2,992, 281 isolated nodes; 767 raw binary features, about 267 ones per row;
    # 10 classes; 60/20/20), where Kipf's GCN recipe is unstable: wide, dense, unnormalised
    # inputs. Hubs from a heavy power law, 2% of the nodes isolated. Ten seeds by default: with
    # a bistable recipe five say little.
    "copurchase": {"seeds": 10,
                   "command": "generate",
                   "args": ["--nodes", "13752", "--avg-degree", "51", "--degree-exponent", "2.05",
                            "--isolated", "0.02", "--homophily", "0.78", "--feature-dim", "767",
                            "--binary-features", "267", "--noise", "0.3", "--classes", "10",
                            "--train-ratio", "0.6", "--val-ratio", "0.2", "--test-ratio", "0.2",
                            "--seed", "1"],
                   "row_normalize": False},
    # Amazon Computers (datasets/README.md), the real graph the proxy above stands in for. Kipf's
    # GCN recipe keeps anywhere from none to 9 of its 16 hidden units alive there, and the test
    # accuracy follows how many (tools/reference/README.md): forty seeds, and GCN only.
    "amazon-computers": {"seeds": 40, "models": ["gcn"], "locked_seeds": [4],
                         "command": "import",
                         "args": ["--npy", "{datasets}/amazon-computers.npz"],
                         "row_normalize": False},
}

MODELS = ["gcn", "sage", "gat"]


def significant(values, digits=5):
    """Rounds to 5 significant digits by default, which keeps the files small and well above
    the noise between seeds; a locked run, equal to Strata's up to float32 rounding, keeps 7."""
    return [float(f"{v:.{digits}g}") for v in values]


def missing_options(strata, spec):
    """The options of spec that `strata COMMAND --help` does not list (an older binary)."""
    help_text = subprocess.run([strata, spec["command"], "--help"], capture_output=True,
                               text=True, check=True).stdout
    return [a for a in spec["args"] if a.startswith("--") and a not in help_text]


def build(strata, spec, datasets, out):
    args = [a.replace("{datasets}", datasets) for a in spec["args"]]
    subprocess.run([strata, spec["command"], out, *args], check=True, stdout=subprocess.DEVNULL)


def record(name, spec, dataset_dir, model, seeds):
    """Trains every seed and returns the fixture for one dataset x model."""
    recipe = ref.recipe_for(model)
    g = ref.load_dataset(dataset_dir, spec["row_normalize"])
    runs = [ref.train(g, model, recipe, seed) for seed in seeds]
    losses = np.array([run["train_loss"] for run in runs])
    return {
        "dataset": name,
        "model": model,
        "dataset_command": " ".join(["strata", spec["command"], "OUT", *spec["args"]]),
        "recipe": {**recipe, "row_normalize": spec["row_normalize"]},
        "seeds": list(seeds),
        "epochs": recipe["epochs"],
        "train_loss_mean": significant(losses.mean(axis=0)),
        "train_loss_std": significant(losses.std(axis=0, ddof=1)),  # sample standard deviation
        **{key: significant(run[key] for run in runs)
           for key in ("final_test_acc", "final_val_acc", "best_test_acc", "best_val_acc")},
        "torch_version": torch.__version__,
    }


def record_locked(name, spec, dataset_dir, seed):
    """The reference's GCN run from Strata's initial weights and dropout masks of `seed`."""
    recipe = ref.recipe_for("gcn")
    g = ref.load_dataset(dataset_dir, spec["row_normalize"])
    run = ref.train(g, "gcn", recipe, seed, strata_init=True, strata_dropout=True)
    return {
        "dataset": name,
        "model": "gcn",
        "dataset_command": " ".join(["strata", spec["command"], "OUT", *spec["args"]]),
        "recipe": {**recipe, "row_normalize": spec["row_normalize"]},
        "seed": seed,
        "draws": "Strata's full-graph initial weights and dropout masks (strata_streams.py)",
        "train_loss": significant(run["train_loss"], 7),
        **{key: run[key] for key in ("final_test_acc", "final_val_acc")},
        "torch_version": torch.__version__,
    }


def write(fixture, path):
    """One key per line: small, and diffs show which series changed."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in fixture.items()]
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True, help="the strata binary that builds the datasets")
    ap.add_argument("--out", required=True, help="directory for the fixtures")
    ap.add_argument("--seeds", type=int, help="default: the dataset's, else 5")
    ap.add_argument("--only", nargs="+", choices=sorted(DATASETS), help="datasets to record")
    ap.add_argument("--datasets", default=os.path.join(repo, "datasets"),
                    help="directory holding cora.npz (default: the repository's datasets/)")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=MODELS, help="models to record")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="strata-fixtures-") as tmp:
        built = {}  # command line -> directory, so cora and cora-raw share one import
        for name in a.only or DATASETS:
            spec = DATASETS[name]
            missing = missing_options(a.strata, spec)
            if missing:
                print(f"{name}: skipped, `strata {spec['command']}` lacks {' '.join(missing)}")
                continue
            key = (spec["command"], *spec["args"])
            if key not in built:
                built[key] = os.path.join(tmp, name)
                build(a.strata, spec, a.datasets, built[key])
            seeds = range(a.seeds or spec.get("seeds", 5))
            for model in [m for m in a.models if m in spec.get("models", MODELS)]:
                start = time.time()
                fixture = record(name, spec, built[key], model, seeds)
                write(fixture, os.path.join(a.out, f"{name}-{model}.json"))
                acc = np.array(fixture["final_test_acc"])
                print(f"{name}-{model}: final test acc {acc.mean():.4f} ± {acc.std(ddof=1):.4f}, "
                      f"final train loss {fixture['train_loss_mean'][-1]:.4f} "
                      f"({len(seeds)} seeds, {time.time() - start:.0f} s)", flush=True)
            if "gcn" not in a.models:
                continue
            for seed in spec.get("locked_seeds", []):
                fixture = record_locked(name, spec, built[key], seed)
                os.makedirs(os.path.join(a.out, "locked"), exist_ok=True)
                write(fixture, os.path.join(a.out, "locked", f"{name}-gcn-seed{seed}.json"))
                print(f"{name}-gcn, Strata's draws of seed {seed}: final test acc "
                      f"{fixture['final_test_acc']:.4f}", flush=True)


if __name__ == "__main__":
    main()
