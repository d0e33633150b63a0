#!/usr/bin/env python3
"""Feeding a GPU: the same GraphSAGE model (3 layers, hidden 256 by default) trained on the same
sampled batches, its input features coming three ways:

  resident   every feature row in device memory, gathered with index_select: the upper bound
  strata     strata.NeighborLoader(device=...), direct store within --budget, features through
             the pinned region, copied ahead on a side stream, with gpu_cache= each share of
             --gpu-cache-shares of the feature bytes
  memmap     a numpy.memmap gather per batch, copied to the device (what a PyG user does today)
  multistage-lbs, multistage-partition
             strata.MultistageLoader(device=...) within --budget: macro-batches read whole
             (the partition run on --partitioned, a `strata partition` of the dataset)

    bench/python/gpu_feed_bench.py DATASET [--device cuda] [--epochs 2] [--budget 1G]
        [--gpu-cache-shares 0,0.25,1] [--gpu-cache-policies presample] [--train 1]
        [--runs resident,strata,memmap] [--max-batches N] [--epoch-seconds S]
        [--memmap-page-cache BYTES] [--partitioned DIR] [--reuse 1|auto]

Prints one JSON object per run and epoch: epoch_s, steps, wait_s (the step waiting for its
input: the loader's wait, or the gather and copy), bytes_to_device and for Strata its GPU hit
rate. --epoch-seconds ends an epoch early after the step that passes S seconds (a memmap run
confined to a little memory can take minutes per batch): compare epoch_s / steps then.
The memmap runs start with the features dropped from the page cache; on a machine with more
memory than the features, --memmap-page-cache BYTES (root) moves the process, for that run, into
a memory cgroup that lets it charge BYTES more (page cache and new buffers), the host memory
--budget gives Strata. Runs on a CPU device too, for checking the script; the figures that
matter are a GPU's.
"""

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import strata  # noqa: E402
import train_sage  # noqa: E402  (the plain-torch GraphSAGE)
from loader_bench import memory_cgroup  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--device", default="cuda")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--budget", default="1G", help="the Strata loader's host memory budget")
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--gpu-cache-shares", default="0,0.25,1")
    p.add_argument("--gpu-cache-policies", default="degree",
                   help="rankings to compare (presample, rpr, degree)")
    p.add_argument("--train", type=int, default=1, help="0: feed the batches, no model")
    p.add_argument("--runs", default="resident,strata,memmap")
    p.add_argument("--max-batches", type=int, default=0, help="time only the first N batches")
    p.add_argument("--epoch-seconds", type=float, default=0,
                   help="end an epoch after the step that passes this many seconds")
    p.add_argument("--memmap-page-cache", type=int, default=0,
                   help="bytes the memmap run may charge beyond what the process holds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--partitioned", help="`strata partition` of the dataset, for the"
                   " multistage partition run")
    p.add_argument("--reuse", default=1, type=lambda v: v if v == "auto" else int(v),
                   help="the multistage runs' reuse (1..4 or auto)")
    return p.parse_args()


def model_for(args, dataset, fanouts):
    if not args.train:
        return None, None
    torch.manual_seed(args.seed)
    model = train_sage.GraphSage(dataset.feature_dim, args.hidden, dataset.num_classes,
                                 len(fanouts), 0.5).to(args.device)
    return model, torch.optim.Adam(model.parameters(), lr=0.003)


def step(model, optimizer, features, labels, blocks):
    if model is None:
        return
    loss = F.cross_entropy(model(features, blocks), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def features_memmap(dataset):
    meta = dataset.meta
    stride = meta["row_stride_bytes"] // 4
    rows = np.memmap(os.path.join(dataset.path, "features.bin"), dtype=np.float32, mode="r",
                     shape=(meta["num_nodes"], stride))
    return rows[:, :meta["feature_dim"]]


def presampled_epochs(args, dataset, fanouts):
    """Each epoch's batches as the loader samples them, on the device, features left out (the
    store makes no difference to the batches; mmap's gather costs least)."""
    loader = strata.NeighborLoader(dataset, fanouts, args.batch_size, seed=args.seed,
                                   feature_store="mmap", memory_budget=args.budget,
                                   cache_fraction=0, device="cpu")
    epochs = []
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        batches = []
        for batch in loader:
            blocks = [strata.TensorBlock(b.indptr.clone().to(args.device),
                                         b.indices.clone().to(args.device),
                                         b.src_nodes.clone(), b.num_dst) for b in batch.blocks]
            batches.append((batch.input_nodes.clone(), batch.labels.clone().to(args.device),
                            blocks))
            if len(batches) == args.max_batches:
                break
        epochs.append(batches)
    return epochs


def out_of_time(args, start):
    return args.epoch_seconds > 0 and time.perf_counter() - start > args.epoch_seconds


def timed_epochs(args, dataset, fanouts, name, epochs, gather, **extra):
    """Trains on presampled `epochs`, each batch's features from gather(ids, start) -> (x, bytes,
    rows gathered), x None when the epoch that began at `start` ran out of time inside it."""
    model, optimizer = model_for(args, dataset, fanouts)
    for e, batches in enumerate(epochs):
        synchronize(args.device)
        start = time.perf_counter()
        wait = 0.0
        moved = 0
        steps = 0
        rows = 0
        for ids, labels, blocks in batches:
            t = time.perf_counter()
            x, nbytes, gathered = gather(ids, start)
            synchronize(args.device)
            wait += time.perf_counter() - t
            rows += gathered
            if x is None:
                break
            moved += nbytes
            step(model, optimizer, x, labels, blocks)
            steps += 1
            if out_of_time(args, start):
                break
        synchronize(args.device)
        print(json.dumps({"run": name, "epoch": e, "epoch_s": time.perf_counter() - start,
                          "steps": steps, "rows": rows, "wait_s": wait,
                          "bytes_to_device": moved, **extra}), flush=True)


def resident_run(args, dataset, fanouts, epochs):
    rows = features_memmap(dataset)
    resident = torch.empty((rows.shape[0], rows.shape[1]), dtype=torch.float32,
                           device=args.device)
    for start in range(0, rows.shape[0], 1 << 18):
        chunk = np.ascontiguousarray(rows[start:start + (1 << 18)])
        resident[start:start + len(chunk)] = torch.from_numpy(chunk).to(args.device)

    def gather(ids, start):
        return resident.index_select(0, ids.to(args.device)), 8 * len(ids), len(ids)

    timed_epochs(args, dataset, fanouts, "resident", epochs, gather)


def confine(limit_bytes):
    """Moves this process into a fresh memory cgroup of `limit_bytes`. What the process holds
    already stays charged where it was, so the limit bounds only what it takes from now on."""
    try:
        cgroup_v2 = pathlib.Path("/sys/fs/cgroup/cgroup.subtree_control")
        if cgroup_v2.exists() and "memory" not in cgroup_v2.read_text().split():
            cgroup_v2.write_text("+memory")
        group = memory_cgroup(limit_bytes)
        (group / "cgroup.procs").write_text(str(os.getpid()))
        return f"{limit_bytes} bytes"
    except OSError as e:
        return f"unlimited ({e})"


def memmap_run(args, dataset, fanouts, epochs):
    rows = features_memmap(dataset)
    fd = os.open(os.path.join(dataset.path, "features.bin"), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    if args.memmap_page_cache:
        print(json.dumps({"run": "memmap", "page_cache": confine(args.memmap_page_cache)}),
              flush=True)

    def gather(ids, start):
        # In pieces, so that a run past --epoch-seconds stops inside a batch.
        index = ids.numpy()
        x = torch.empty((len(index), rows.shape[1]), dtype=torch.float32)
        for lo in range(0, len(index), 1024):
            x[lo:lo + 1024] = torch.from_numpy(rows[index[lo:lo + 1024]])
            if out_of_time(args, start):
                return None, 0, min(lo + 1024, len(index))
        return x.to(args.device), x.element_size() * x.nelement(), len(index)

    timed_epochs(args, dataset, fanouts, "memmap", epochs, gather)


def loader_run(args, dataset, fanouts, name, make_loader):
    """Trains on the batches of the loader make_loader() opens, timing its opening too."""
    start = time.perf_counter()
    loader = make_loader()
    print(json.dumps({"run": name, "open_s": time.perf_counter() - start}), flush=True)
    model, optimizer = model_for(args, dataset, fanouts)
    for e in range(args.epochs):
        loader.set_epoch(e)
        synchronize(args.device)
        start = time.perf_counter()
        steps = 0
        for batch in loader:
            step(model, optimizer, batch.features, batch.labels, batch.blocks)
            steps += 1
            if steps == args.max_batches or out_of_time(args, start):
                break
        synchronize(args.device)
        feed = loader.stats()["device"]
        print(json.dumps({"run": name, "epoch": e, "epoch_s": time.perf_counter() - start,
                          "steps": steps, "wait_s": feed["wait_s"],
                          "copy_s": feed["copy_s"], "bytes_to_device": feed["bytes_copied"],
                          "batches": feed["batches"], "gpu_hit_rate": feed["gpu_hit_rate"],
                          "pinned": feed["pinned"]}), flush=True)
    loader.close()


def strata_run(args, dataset, fanouts, share, policy):
    feature_bytes = dataset.num_nodes * dataset.feature_dim * 4
    loader_run(args, dataset, fanouts, f"strata gpu_cache={share:g} {policy}",
               lambda: strata.NeighborLoader(dataset, fanouts, args.batch_size, seed=args.seed,
                                             feature_store="direct", memory_budget=args.budget,
                                             hidden=args.hidden, device=args.device,
                                             gpu_cache=int(share * feature_bytes),
                                             gpu_cache_policy=policy))


def multistage_run(args, fanouts, method):
    """MultistageLoader(method) on the device: LBS on the dataset, partition mode on
    --partitioned (a `strata partition` of it)."""
    dataset = strata.Dataset(args.partitioned if method == "partition" else args.dataset)
    loader_run(args, dataset, fanouts, f"multistage {method} reuse={args.reuse}",
               lambda: strata.MultistageLoader(dataset, fanouts, args.batch_size, method=method,
                                               reuse=args.reuse, seed=args.seed,
                                               memory_budget=args.budget, hidden=args.hidden,
                                               device=args.device))


def main():
    args = parse_args()
    dataset = strata.Dataset(args.dataset)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    runs = args.runs.split(",")
    print(json.dumps({"device": str(torch.device(args.device)), "dataset": args.dataset,
                      "nodes": dataset.num_nodes, "feature_dim": dataset.feature_dim,
                      "fanouts": fanouts, "hidden": args.hidden, "budget": args.budget}))
    if "strata" in runs:
        for share in (float(s) for s in args.gpu_cache_shares.split(",")):
            for policy in args.gpu_cache_policies.split(",") if share > 0 else ["-"]:
                strata_run(args, dataset, fanouts, share, policy if share > 0 else "presample")
    for method in ("lbs", "partition"):
        if "multistage-" + method in runs:
            multistage_run(args, fanouts, method)
    if "resident" in runs or "memmap" in runs:
        epochs = presampled_epochs(args, dataset, fanouts)
        if "resident" in runs:
            resident_run(args, dataset, fanouts, epochs)
        if "memmap" in runs:
            memmap_run(args, dataset, fanouts, epochs)


if __name__ == "__main__":
    main()
