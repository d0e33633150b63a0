#!/usr/bin/env python3
"""Feeding a GPU: the same GraphSAGE model (3 layers, hidden 256 by default) trained on the same
sampled batches, its input features coming three ways:

  resident   every feature row in device memory, gathered with index_select: the upper bound
  strata     strata.NeighborLoader(device=...), direct store within --budget, features through
             the pinned region, copied ahead on a side stream, with gpu_cache= each share of
             --gpu-cache-shares of the feature bytes
  memmap     a numpy.memmap gather per batch, copied to the device (what a PyG user does today)

    bench/python/gpu_feed_bench.py DATASET [--device cuda] [--epochs 2] [--budget 1G]
        [--gpu-cache-shares 0,0.25,1] [--gpu-cache-policies presample] [--train 1]
        [--runs resident,strata,memmap] [--max-batches N]

Prints one JSON object per run and epoch: epoch_s, wait_s (the step waiting for its input:
the loader's wait, or the gather and copy), bytes_to_device and for Strata its GPU hit rate.
The memmap runs start with the features dropped from the page cache; on a machine with more
memory than the features run them under a memory limit (bench/python/loader_bench.py's
--memmap-memory-limit does that with a cgroup). Runs on a CPU device too, for checking the
script; the figures that matter are a GPU's.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import strata  # noqa: E402
import train_sage  # noqa: E402  (the plain-torch GraphSAGE)


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
    p.add_argument("--seed", type=int, default=0)
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
    """Each epoch's batches as the loader samples them, on the device, features left out."""
    loader = strata.NeighborLoader(dataset, fanouts, args.batch_size, seed=args.seed,
                                   feature_store="direct", memory_budget=args.budget,
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


def timed_epochs(args, dataset, fanouts, name, epochs, gather, **extra):
    """Trains on presampled `epochs`, each batch's features from gather(ids) -> (x, bytes)."""
    model, optimizer = model_for(args, dataset, fanouts)
    for e, batches in enumerate(epochs):
        synchronize(args.device)
        start = time.perf_counter()
        wait = 0.0
        moved = 0
        for ids, labels, blocks in batches:
            t = time.perf_counter()
            x, nbytes = gather(ids)
            synchronize(args.device)
            wait += time.perf_counter() - t
            moved += nbytes
            step(model, optimizer, x, labels, blocks)
        synchronize(args.device)
        print(json.dumps({"run": name, "epoch": e, "epoch_s": time.perf_counter() - start,
                          "wait_s": wait, "bytes_to_device": moved, "batches": len(batches),
                          **extra}), flush=True)


def resident_run(args, dataset, fanouts, epochs):
    rows = features_memmap(dataset)
    resident = torch.empty((rows.shape[0], rows.shape[1]), dtype=torch.float32,
                           device=args.device)
    for start in range(0, rows.shape[0], 1 << 18):
        chunk = np.ascontiguousarray(rows[start:start + (1 << 18)])
        resident[start:start + len(chunk)] = torch.from_numpy(chunk).to(args.device)

    def gather(ids):
        return resident.index_select(0, ids.to(args.device)), 8 * len(ids)

    timed_epochs(args, dataset, fanouts, "resident", epochs, gather)


def memmap_run(args, dataset, fanouts, epochs):
    rows = features_memmap(dataset)
    fd = os.open(os.path.join(dataset.path, "features.bin"), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)

    def gather(ids):
        x = torch.from_numpy(np.ascontiguousarray(rows[ids.numpy()]))
        return x.to(args.device), x.element_size() * x.nelement()

    timed_epochs(args, dataset, fanouts, "memmap", epochs, gather)


def strata_run(args, dataset, fanouts, share, policy):
    feature_bytes = dataset.num_nodes * dataset.feature_dim * 4
    start = time.perf_counter()
    loader = strata.NeighborLoader(dataset, fanouts, args.batch_size, seed=args.seed,
                                   feature_store="direct", memory_budget=args.budget,
                                   hidden=args.hidden, device=args.device,
                                   gpu_cache=int(share * feature_bytes),
                                   gpu_cache_policy=policy)
    print(json.dumps({"run": f"strata gpu_cache={share:g} {policy}",
                      "open_s": time.perf_counter() - start}), flush=True)
    model, optimizer = model_for(args, dataset, fanouts)
    for e in range(args.epochs):
        loader.set_epoch(e)
        synchronize(args.device)
        start = time.perf_counter()
        for b, batch in enumerate(loader):
            step(model, optimizer, batch.features, batch.labels, batch.blocks)
            if b + 1 == args.max_batches:
                break
        synchronize(args.device)
        feed = loader.stats()["device"]
        print(json.dumps({"run": f"strata gpu_cache={share:g} {policy}", "epoch": e,
                          "epoch_s": time.perf_counter() - start, "wait_s": feed["wait_s"],
                          "copy_s": feed["copy_s"], "bytes_to_device": feed["bytes_copied"],
                          "batches": feed["batches"], "gpu_hit_rate": feed["gpu_hit_rate"],
                          "pinned": feed["pinned"]}), flush=True)
    loader.close()


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
    if "resident" in runs or "memmap" in runs:
        epochs = presampled_epochs(args, dataset, fanouts)
        if "resident" in runs:
            resident_run(args, dataset, fanouts, epochs)
        if "memmap" in runs:
            memmap_run(args, dataset, fanouts, epochs)


if __name__ == "__main__":
    main()
