#!/usr/bin/env python3
"""Feeding a PyTorch training loop from a dataset whose features do not fit the budget:
strata.NeighborLoader (direct I/O behind the tiered cache, run ahead on its own threads)
against the usual numpy.memmap gather on the same sampled ids, both feeding the same GraphSAGE
model, and `strata train` on the same epochs for the loader's overhead.

    bench/python/loader_bench.py DATASET --strata build/strata [--epochs 2] [--budget 1G]
        [--memmap-memory-limit BYTES] [--max-batches N] [--runs strata_train,...]

Prints one JSON object per measurement and a summary line. The memmap runs start with the
features file dropped from the page cache (posix_fadvise DONTNEED) and then use the page cache
as mmap does. On a machine with more memory than the features, the page cache soon holds the
whole file; --memmap-memory-limit runs them in a memory cgroup of that size (root, cgroup v1 or
v2), so that their page cache, like Strata's cache, gets about the budget. The Strata runs read
with direct I/O within the budget.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import strata  # noqa: E402
import train_sage  # noqa: E402

FANOUTS = [10, 5]
BATCH = 1000
HIDDEN = 128
LR = 0.003


def model_for(dataset):
    torch.manual_seed(0)
    model = train_sage.GraphSage(dataset.feature_dim, HIDDEN, dataset.num_classes, len(FANOUTS),
                                 0.5)
    return model, torch.optim.Adam(model.parameters(), lr=LR)


def step(model, optimizer, features, labels, blocks):
    loss = F.cross_entropy(model(features, blocks), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def strata_loader_epochs(args, dataset, train_model):
    loader = strata.NeighborLoader(dataset, FANOUTS, BATCH, seed=args.seed,
                                   feature_store="direct", memory_budget=args.budget,
                                   hidden=HIDDEN)
    model, optimizer = model_for(dataset)
    times = []
    for _ in range(args.epochs):
        start = time.perf_counter()
        for batch in loader:
            if train_model:
                step(model, optimizer, torch.from_numpy(batch.features),
                     torch.from_numpy(batch.labels), batch.blocks)
        times.append(time.perf_counter() - start)
    return times, len(loader), loader.stats()


class PresampledBlock:
    """A block's arrays copied out of a batch, for the memmap loop."""

    def __init__(self, block):
        self.indptr, self.indices = block.indptr.copy(), block.indices.copy()
        self.num_dst = block.num_dst


def presample(args, dataset, epoch):
    """The ids and blocks of an epoch, as the Strata loader samples them (features dropped)."""
    loader = strata.NeighborLoader(dataset, FANOUTS, BATCH, seed=args.seed,
                                   feature_store="direct", memory_budget=args.budget,
                                   cache_fraction=0)
    loader.set_epoch(epoch)
    return [(batch.input_nodes.copy(), batch.labels.copy(),
             [PresampledBlock(b) for b in batch.blocks]) for batch in loader]


def memmap_epochs(args, dataset, train_model):
    meta = dataset.meta
    path = os.path.join(dataset.path, "features.bin")
    stride = meta["row_stride_bytes"] // 4
    features = np.memmap(path, dtype=np.float32, mode="r",
                         shape=(meta["num_nodes"], stride))[:, :meta["feature_dim"]]
    epochs = [presample(args, dataset, e) for e in range(args.epochs)]
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    model, optimizer = model_for(dataset)
    times = []
    for batches in epochs:
        start = time.perf_counter()
        for b, (ids, labels, blocks) in enumerate(batches[:args.max_batches or None]):
            x = torch.from_numpy(np.ascontiguousarray(features[ids]))
            if train_model:
                step(model, optimizer, x, torch.from_numpy(labels), blocks)
            print(f"memmap batch {b}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        times.append(time.perf_counter() - start)
    return times, min(len(epochs[0]), args.max_batches or len(epochs[0]))


def strata_train_epochs(args):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.jsonl")
        subprocess.run([args.strata, "train", args.dataset, "--model", "sage", "--layers", "2",
                        "--hidden", str(HIDDEN), "--fanouts", ",".join(map(str, FANOUTS)),
                        "--batch-size", str(BATCH), "--epochs", str(args.epochs), "--lr", str(LR),
                        "--memory-budget", args.budget, "--feature-store", "direct",
                        "--eval-every", "0", "--eval-fanouts", ",".join(map(str, FANOUTS)), "--seed", str(args.seed), "--metrics-out", metrics],
                       check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            return [json.loads(line) for line in f if '"epoch"' in line]


def memory_cgroup(limit_bytes):
    """A fresh memory cgroup limited to `limit_bytes`: (directory, procs file)."""
    v1 = pathlib.Path("/sys/fs/cgroup/memory")
    if v1.is_dir():
        group = v1 / f"strata_bench_{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "memory.limit_in_bytes").write_text(str(limit_bytes))
    else:
        group = pathlib.Path("/sys/fs/cgroup") / f"strata_bench_{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "memory.max").write_text(str(limit_bytes))
    return group


def run_confined(args, runs, limit):
    """Runs `runs` of this script in a child confined to a memory cgroup; returns its lines."""
    group = memory_cgroup(limit)
    command = [sys.executable, os.path.abspath(__file__), args.dataset, "--strata", args.strata,
               "--epochs", str(args.epochs), "--budget", args.budget, "--seed", str(args.seed),
               "--runs", ",".join(runs), "--max-batches", str(args.max_batches),
               "--confined", str(limit)]
    try:
        child = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True,
                               preexec_fn=lambda: (group / "cgroup.procs").write_text(
                                   str(os.getpid())))
    finally:
        group.rmdir()
    return [json.loads(line) for line in child.stdout.splitlines()]


RUNS = ["strata_train", "strata_loader_only", "strata_loader_torch_sage", "memmap_only",
        "memmap_torch_sage"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--strata", required=True, help="the strata binary")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--budget", default="1G")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", default=",".join(RUNS))
    p.add_argument("--memmap-memory-limit", type=int, default=0,
                   help="bytes: run the memmap runs in a memory cgroup of this size")
    p.add_argument("--max-batches", type=int, default=0,
                   help="memmap runs: time only the first N batches of each epoch")
    p.add_argument("--confined", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    dataset = strata.Dataset(args.dataset)
    runs = args.runs.split(",")
    results = {}  # run -> batches per second of each epoch

    def report(name, times, batches, **extra):
        results[name] = [batches / t for t in times]
        record = {"run": name, "epoch_time_s": times, "batches": batches,
                  "batches_per_s": results[name], **extra}
        if args.confined:
            record["memory_limit_bytes"] = args.confined
        print(json.dumps(record), flush=True)

    if "strata_train" in runs:
        epochs = strata_train_epochs(args)
        report("strata_train", [e["time_s"] for e in epochs], epochs[0]["batches"],
               train_s=[e["stage_busy"]["train_s"] for e in epochs])
    for name, train_model in (("strata_loader_only", False), ("strata_loader_torch_sage", True)):
        if name in runs:
            times, batches, stats = strata_loader_epochs(args, dataset, train_model)
            report(name, times, batches, loader=stats)
    memmap_runs = [r for r in ("memmap_only", "memmap_torch_sage") if r in runs]
    if memmap_runs and args.memmap_memory_limit:
        for record in run_confined(args, memmap_runs, args.memmap_memory_limit):
            results[record["run"]] = record["batches_per_s"]
            print(json.dumps(record), flush=True)
    else:
        for name in memmap_runs:
            times, batches = memmap_epochs(args, dataset, name == "memmap_torch_sage")
            report(name, times, batches)
    if args.confined:
        return
    last = {name: rates[-1] for name, rates in results.items()}
    summary = {"summary": "batches per second, last epoch", **last}
    if "strata_loader_only" in last and "strata_train" in last:
        # Time per batch of the loader alone relative to `strata train`'s whole step.
        summary["loader_only_time_vs_strata_train"] = last["strata_train"] / last[
            "strata_loader_only"]
    if "memmap_torch_sage" in last and "strata_loader_torch_sage" in last:
        summary["strata_loader_vs_memmap_with_model"] = (last["strata_loader_torch_sage"] /
                                                        last["memmap_torch_sage"])
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
