#!/usr/bin/env python3
"""PyG's SAGEConv or GATConv trained on Strata's batches: a PyG model, unchanged, fed by
strata.NeighborLoader through batch.to_pyg().

    examples/train_pyg.py DATASET [--model sage|gat] [--device cpu|cuda] [--seed S]
                          [--epochs E] [--fanouts -1,-1] [--batch-size N] [--memory-budget B]

The defaults are the reference recipes (tools/reference/train_reference.py) that
`strata train --model sage|gat` follows: two layers, full neighbourhoods, the whole training
split as one batch, rows normalised, Adam, 200 epochs, the final model evaluated on the
validation and test splits. Needs torch_geometric (2.5.3 runs on Debian's torch 1.13).
Progress goes to stderr, one line per epoch with the time the step waited for batches, the
time copying them to the device and the compute; the last stdout line is one JSON object
with test_acc, val_acc, epoch_time_s, train_loss and the loader's counters.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, SAGEConv

import strata

RECIPES = {
    "sage": {"hidden": 16, "dropout": 0.5, "input_dropout": 0.5, "lr": 0.01},
    "gat": {"hidden": 8, "heads": 8, "dropout": 0.6, "input_dropout": 0.6, "lr": 0.005},
}
RELU_GAIN = math.sqrt(2.0)  # the recipes' Glorot gain, as DGL's layers use


class PygStack(torch.nn.Module):
    """PyG layers applied to a Strata batch's per-layer (edge_index, size) pairs, each layer
    bipartite (the targets are the first size[1] sources), with input dropout and, between
    layers, `activation` then dropout."""

    def __init__(self, convs, activation, dropout, input_dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList(convs)
        self.activation = activation
        self.dropout, self.input_dropout = dropout, input_dropout

    def forward(self, data):
        x = F.dropout(data.x, self.input_dropout, self.training)
        for i, (conv, (edge_index, size)) in enumerate(zip(self.convs, data.adjs)):
            x = conv((x, x[:size[1]]), edge_index)
            if i + 1 < len(self.convs):
                x = F.dropout(self.activation(x), self.dropout, self.training)
        return x


def pyg_sage(in_dim, hidden, classes, dropout, input_dropout):
    """GraphSAGE-mean from PyG's SAGEConv: lin_r on the node itself (no bias), lin_l (with the
    layer's bias) on the mean of its neighbours; ReLU."""
    convs = [SAGEConv(in_dim, hidden), SAGEConv(hidden, classes)]
    for conv in convs:
        torch.nn.init.xavier_uniform_(conv.lin_l.weight, gain=RELU_GAIN)
        torch.nn.init.xavier_uniform_(conv.lin_r.weight, gain=RELU_GAIN)
        torch.nn.init.zeros_(conv.lin_l.bias)
    return PygStack(convs, F.relu, dropout, input_dropout)


def pyg_gat(in_dim, hidden, heads, classes, dropout, input_dropout):
    """GAT from PyG's GATConv: hidden heads concatenated, one output head, ELU, dropout on the
    attention weights too, a self loop per target."""
    convs = [GATConv(in_dim, hidden, heads=heads, dropout=dropout),
             GATConv(hidden * heads, classes, heads=1, concat=False, dropout=dropout)]
    for conv in convs:
        torch.nn.init.xavier_uniform_(conv.lin.weight, gain=RELU_GAIN)
        torch.nn.init.xavier_uniform_(conv.att_src, gain=RELU_GAIN)
        torch.nn.init.xavier_uniform_(conv.att_dst, gain=RELU_GAIN)
        torch.nn.init.zeros_(conv.bias)
    return PygStack(convs, F.elu, dropout, input_dropout)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--model", choices=sorted(RECIPES), default="sage")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--fanouts", default="-1,-1", help="input layer first; -1 = all neighbours")
    p.add_argument("--batch-size", type=int, default=0, help="0: the whole training split")
    p.add_argument("--feature-store", default="memory", choices=["direct", "memory", "mmap"])
    p.add_argument("--memory-budget", default="1G")
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    return p.parse_args(argv)


def loader_for(args, dataset, split, batch_size):
    return strata.NeighborLoader(
        dataset, [int(f) for f in args.fanouts.split(",")], batch_size, split=split,
        shuffle=split == "train", seed=args.seed, feature_store=args.feature_store,
        memory_budget=args.memory_budget, row_normalize=True, device=args.device)


def build_model(args, dataset):
    torch.manual_seed(args.seed)
    r = RECIPES[args.model]
    if args.model == "sage":
        return pyg_sage(dataset.feature_dim, r["hidden"], dataset.num_classes, r["dropout"],
                        r["input_dropout"])
    return pyg_gat(dataset.feature_dim, r["hidden"], r["heads"], dataset.num_classes,
                   r["dropout"], r["input_dropout"])


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            data = batch.to_pyg()
            correct += int((model(data).argmax(1) == data.y).sum())
            total += data.batch_size
    return correct / max(total, 1)


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def train_epoch(model, optimizer, loader):
    """One pass; returns the mean loss and the seconds spent in the step outside the loader."""
    model.train()
    losses = []
    for batch in loader:
        data = batch.to_pyg()
        loss = F.cross_entropy(model(data), data.y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return float(np.mean(losses)) if losses else float("nan")


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    dataset = strata.Dataset(args.dataset)
    train_size = len(dataset.split("train"))
    train = loader_for(args, dataset, "train", args.batch_size or train_size)
    model = build_model(args, dataset).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=RECIPES[args.model]["lr"],
                                 weight_decay=args.weight_decay)
    epoch_times, losses = [], []
    for epoch in range(args.epochs):
        start = time.perf_counter()
        losses.append(train_epoch(model, optimizer, train))
        synchronize(args.device)
        epoch_times.append(time.perf_counter() - start)
        feed = train.stats()["device"]
        print(f"epoch {epoch} loss {losses[-1]:.4f} time {epoch_times[-1]:.3f}s "
              f"wait {feed['wait_s']:.3f}s copy {feed['copy_s']:.3f}s "
              f"compute {epoch_times[-1] - feed['wait_s']:.3f}s", file=sys.stderr)
    val_acc = evaluate(model, loader_for(args, dataset, "val", 1024))
    test_acc = evaluate(model, loader_for(args, dataset, "test", 1024))
    print(json.dumps({"model": args.model, "seed": args.seed, "test_acc": test_acc,
                      "val_acc": val_acc, "epoch_time_s": epoch_times, "train_loss": losses,
                      "loader": train.stats()}))


if __name__ == "__main__":
    main()
