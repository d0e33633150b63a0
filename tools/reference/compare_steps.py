#!/usr/bin/python3
"""Kipf's GCN recipe trained by Strata (full graph) and by the PyTorch reference from the same
initial weights and the same dropout masks (or none), step by step.

The reference takes Strata's draws (strata_streams.py), so the two runs differ only in their
arithmetic: equal implementations give equal losses up to float32 rounding, growing slowly;
a difference in the model, the loss, the optimizer or the normalisation shows as a jump.
Prints each epoch's two training losses and their relative difference, then the largest
difference and the first epoch where it exceeds --tolerance, and both final test accuracies.

Usage: compare_steps.py DATASET --strata build/strata [--seed S] [--epochs E]
                        [--dropout strata|none] [--row-normalize] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_strata  # noqa: E402  (needs the path above)
import train_reference as ref  # noqa: E402


def strata_losses(strata, dataset, seed, epochs, no_dropout, row_normalize, tmp):
    metrics = os.path.join(tmp, "metrics.jsonl")
    flags = list(compare_strata.RECIPE_FLAGS["gcn"])
    if no_dropout:
        for name in ("--dropout", "--input-dropout"):
            flags[flags.index(name) + 1] = "0"
    cmd = [strata, "train", dataset, "--full-graph", *flags, "--threads", "2",
           "--eval-every", "1", "--epochs", str(epochs), "--seed", str(seed),
           "--metrics-out", metrics]
    if row_normalize:
        cmd.append("--row-normalize")
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
    records = [json.loads(line) for line in open(metrics)]
    epochs_ = [r for r in records if r["event"] == "epoch"]
    return [r["train_loss"] for r in epochs_], [r["val_acc"] for r in epochs_], records[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--strata", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--dropout", choices=["strata", "none"], default="strata",
                    help="both drop with Strata's masks, or neither drops")
    ap.add_argument("--row-normalize", action="store_true")
    ap.add_argument("--tolerance", type=float, default=1e-3,
                    help="relative loss difference that counts as diverged")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    a = ap.parse_args()
    no_dropout = a.dropout == "none"

    with tempfile.TemporaryDirectory(prefix="strata-steps-") as tmp:
        s_loss, s_val, s_final = strata_losses(a.strata, a.dataset, a.seed, a.epochs, no_dropout,
                                               a.row_normalize, tmp)
    recipe = ref.recipe_for("gcn", epochs=a.epochs, dropout=0.0 if no_dropout else None)
    g = ref.load_dataset(a.dataset, a.row_normalize)
    r = ref.train(g, "gcn", recipe, a.seed, strata_init=True, strata_dropout=not no_dropout)

    gaps = [abs(s - t) / abs(t) for s, t in zip(s_loss, r["train_loss"])]
    first = next((e for e, d in enumerate(gaps) if d > a.tolerance), None)
    summary = {"seed": a.seed, "dropout": a.dropout, "epochs": a.epochs,
               "max_relative_loss_gap": max(gaps), "first_epoch_over_tolerance": first,
               "strata_final_test_acc": s_final["final_test_acc"],
               "reference_final_test_acc": r["final_test_acc"],
               "strata_train_loss": s_loss, "reference_train_loss": r["train_loss"]}
    if a.json:
        print(json.dumps(summary))
        return
    print("| epoch | Strata loss | reference loss | relative gap | Strata val | reference val |")
    print("|---|---|---|---|---|---|")
    for e, (s, t, d) in enumerate(zip(s_loss, r["train_loss"], gaps)):
        print(f"| {e} | {s:.6f} | {t:.6f} | {d:.2e} | {s_val[e]:.4f} | {r['val_acc'][e]:.4f} |")
    print(f"\nlargest relative gap {max(gaps):.2e}; first epoch over {a.tolerance:g}: {first}; "
          f"final test accuracy Strata {s_final['final_test_acc']:.4f}, "
          f"reference {r['final_test_acc']:.4f}")


if __name__ == "__main__":
    sys.exit(main())
