#!/usr/bin/env python3
"""GraphSAGE trained with plain PyTorch on a Strata dataset, fed by strata.NeighborLoader.

    examples/train_sage.py DATASET [--seed S] [--epochs E] [--feature-store direct|memory|mmap]
                           [--memory-budget B] [--fanouts 10,10] [--batch-size N]
                           [--device cpu|cuda] [--multistage partition|pbs|lbs]

The defaults reproduce GraphSAGE's accuracy on Cora (`strata import data/cora --npy datasets/cora.npz`).
Batches arrive as torch tensors on --device (on cuda through pinned buffers, copied ahead on a
side stream). Progress goes to stderr, one line per epoch with the time the step waited for
batches, the time copying them to the device and the compute; the last stdout line is one
JSON object with test_acc, val_acc, epoch_time_s (one per epoch), train_loss and the loader's
counters. No DGL or PyG: a layer is a few lines of torch over the blocks the loader hands out.
"""

import argparse
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import strata


def mean_of_neighbours(h, block):
    """Mean of each destination's in-neighbours' rows of `h` (0 for none); `block` holds numpy
    arrays (strata.Block) or tensors on h's device (strata.TensorBlock). With LABOR's edge
    weights the mean is weighted: sum(w h) / sum(w), the estimate of the full neighbourhood's."""
    indptr = torch.as_tensor(block.indptr).long()
    degree = indptr[1:] - indptr[:-1]
    dst = torch.repeat_interleave(torch.arange(block.num_dst, device=h.device), degree)
    src = torch.as_tensor(block.indices).long()
    messages = h[src]
    if block.edge_weights is None:
        count = degree.to(h.dtype)
    else:
        weights = torch.as_tensor(block.edge_weights).to(h.dtype)
        messages = messages * weights.unsqueeze(1)
        count = torch.zeros(block.num_dst, dtype=h.dtype, device=h.device).index_add_(
            0, dst, weights)
    total = torch.zeros(block.num_dst, h.shape[1], dtype=h.dtype,
                        device=h.device).index_add_(0, dst, messages)
    return total / count.clamp(min=1e-30).unsqueeze(1)


class SageLayer(torch.nn.Module):
    """h'_d = W_self h_d + W_neigh mean(h_s : s -> d), DGL's SAGEConv with mean aggregation."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.self_weight = torch.nn.Linear(in_dim, out_dim)
        self.neigh_weight = torch.nn.Linear(in_dim, out_dim, bias=False)

    def forward(self, h, block):
        return self.self_weight(h[:block.num_dst]) + self.neigh_weight(mean_of_neighbours(h, block))


class GraphSage(torch.nn.Module):
    def __init__(self, in_dim, hidden, classes, layers, dropout, input_dropout=0.0):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SageLayer(a, b) for a, b in zip(dims, dims[1:]))
        self.dropout = dropout
        self.input_dropout = input_dropout

    def forward(self, x, blocks, history=None):
        # Input dropout draws a mask over every input row (torch's CPU RNG makes that most of
        # a step on large batches), so it is off by default, as in DGL's GraphSAGE example.
        h = F.dropout(x, self.input_dropout, self.training) if self.input_dropout else x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(h, block)
            if i + 1 < len(self.layers):
                h = F.relu(h)
                if history is not None:  # --multistage pbs: the halo's rows from the table
                    history.keep_fresh(i, h)
                h = F.dropout(h, self.dropout, self.training)
                if history is not None:
                    h = history.put_stale(i, h)
        return h


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--feature-store", default="direct", choices=["direct", "memory", "mmap"])
    p.add_argument("--memory-budget", default="1G")
    p.add_argument("--fanouts", default="10,10", help="input layer first; -1 = all neighbours")
    p.add_argument("--eval-fanouts", default="", help="default: all neighbours")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--dropout", type=float, default=0.5, help="after each hidden layer")
    p.add_argument("--input-dropout", type=float, default=0.0)
    p.add_argument("--row-normalize", type=int, default=1, help="1: rows scaled to unit L1 norm")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--multistage", default="", choices=["", "partition", "pbs", "lbs"],
                   help="train on multistage batches (partition, pbs: a strata partition "
                        "dataset; pbs adds the halo, its hidden rows from historical embeddings)")
    p.add_argument("--macro-batch", type=int, default=0, help="0: the most the budget holds")
    return p.parse_args(argv)


def fanout_list(text, layers):
    return [int(f) for f in text.split(",")] if text else [-1] * layers


def loader_for(args, split, fanouts, rank=0, world_size=1):
    if split == "train" and args.multistage:
        return strata.MultistageLoader(
            args.dataset, fanouts, args.batch_size, method=args.multistage,
            macro_batch=args.macro_batch, seed=args.seed, memory_budget=args.memory_budget,
            rank=rank, world_size=world_size, row_normalize=bool(args.row_normalize),
            hidden=args.hidden, device=args.device)
    return strata.NeighborLoader(
        args.dataset, fanouts, args.batch_size if split == "train" else 1024, split=split,
        shuffle=split == "train", seed=args.seed, feature_store=args.feature_store,
        memory_budget=args.memory_budget, rank=rank, world_size=world_size,
        row_normalize=bool(args.row_normalize), hidden=args.hidden, device=args.device)


def evaluate(model, loader):
    """Accuracy over the loader's whole split."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            logits = model(batch.features, batch.blocks)
            correct += int((logits.argmax(1) == batch.labels).sum())
            total += len(batch.labels)
    return correct / max(total, 1)


def train_epoch(model, optimizer, loader):
    """One pass over the loader; returns the mean training loss."""
    model.train()
    losses = []
    for batch in loader:
        logits = model(batch.features, batch.blocks, batch.history)
        loss = F.cross_entropy(logits, batch.labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch.history is not None:
            batch.history.commit()
        losses.append(loss.item())
    return float(np.mean(losses)) if losses else float("nan")


def build_model(args, dataset, layers):
    torch.manual_seed(args.seed)
    return GraphSage(dataset.feature_dim, args.hidden, dataset.num_classes, layers, args.dropout,
                     args.input_dropout).to(args.device)


def timed_epoch(model, optimizer, loader, device):
    """train_epoch, with the epoch's time split: (loss, seconds, the loader's device counters).
    On a GPU the clock stops once the device has finished the epoch's work."""
    start = time.perf_counter()
    loss = train_epoch(model, optimizer, loader)
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
    return loss, time.perf_counter() - start, loader.stats()["device"]


def epoch_line(epoch, loss, seconds, feed):
    return (f"epoch {epoch} loss {loss:.4f} time {seconds:.3f}s wait {feed['wait_s']:.3f}s "
            f"copy {feed['copy_s']:.3f}s ({feed['bytes_copied'] / 2**20:.1f} MiB) "
            f"compute {seconds - feed['wait_s']:.3f}s")


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    fanouts = fanout_list(args.fanouts, 0)
    eval_fanouts = fanout_list(args.eval_fanouts, len(fanouts))
    train = loader_for(args, "train", fanouts)
    model = build_model(args, train.dataset, len(fanouts))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    epoch_times, losses = [], []
    for epoch in range(args.epochs):
        loss, seconds, feed = timed_epoch(model, optimizer, train, args.device)
        losses.append(loss)
        epoch_times.append(seconds)
        print(epoch_line(epoch, loss, seconds, feed), file=sys.stderr)
    val_acc = evaluate(model, loader_for(args, "val", eval_fanouts))
    test_acc = evaluate(model, loader_for(args, "test", eval_fanouts))
    print(json.dumps({"test_acc": test_acc, "val_acc": val_acc, "epoch_time_s": epoch_times,
                      "train_loss": losses, "loader": train.stats()}))


if __name__ == "__main__":
    main()
