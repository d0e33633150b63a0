#!/usr/bin/python3
"""Full-batch PyTorch reference training of GCN, GraphSAGE and GAT on a Strata dataset.

Trains one model with its published full-batch recipe (every training node, full
neighbourhoods, one optimizer step per epoch) and prints, per epoch, the training loss and
the validation accuracy; with --json the last stdout line is one JSON object instead. The
numbers are the yardstick for Strata's own trainer (see README.md next to this file).

Usage: train_reference.py DATASET --model gcn|sage|gat [--seed S] [--epochs E]
                          [--row-normalize] [--hidden H] [--lr LR] [--weight-decay WD]
                          [--dropout P] [--json]
"""
import argparse
import json
import math
import os
import random
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_streams as streams  # noqa: E402  (needs the path above)

# The published recipes. "weight_decay_on" says which parameters get L2: Kipf's GCN puts it on
# the first layer's weight only; the DGL examples put it on every parameter.
RECIPES = {
    # Kipf & Welling 2017 (tkipf/gcn): no bias, Glorot uniform with gain 1, normalised A + I.
    "gcn": {"layers": 2, "hidden": 16, "activation": "relu", "dropout": 0.5,
            "input_dropout": 0.5, "bias": False, "init": "xavier_uniform gain 1",
            "aggregation": "D^-1/2 (A + I) D^-1/2, D = in-degree + 1",
            "optimizer": "adam", "lr": 0.01, "weight_decay": 5e-4,
            "weight_decay_on": "first layer weight", "epochs": 200},
    # DGL examples/pytorch/graphsage/train_full.py with the mean aggregator (DGL's SAGEConv).
    "sage": {"layers": 2, "hidden": 16, "activation": "relu", "dropout": 0.5,
             "input_dropout": 0.5, "bias": True,
             "init": "xavier_uniform gain sqrt(2) on W_self and W_neigh, bias 0",
             "aggregation": "h W_self + mean(in-neighbours) W_neigh + b, empty mean = 0",
             "optimizer": "adam", "lr": 0.01, "weight_decay": 5e-4,
             "weight_decay_on": "all parameters", "epochs": 200},
    # Velickovic et al. 2018, as in DGL's GATConv / examples/pytorch/gat. DGL initialises with
    # xavier_normal_; we use xavier_uniform_ (same fans and gain, hence the same variance).
    # Attention vectors have DGL's shape (1, heads, F), so torch's fans are heads*F and F.
    "gat": {"layers": 2, "hidden": 8, "heads": 8, "out_heads": 1, "activation": "elu",
            "dropout": 0.6, "input_dropout": 0.6, "attention_dropout": 0.6,
            "negative_slope": 0.2, "bias": True,
            "init": "xavier_uniform gain sqrt(2); W fans (in, heads*F); "
                    "a_l, a_r shape (1, heads, F) fans (heads*F, F); bias 0",
            "aggregation": "softmax over in-edges plus one added self loop per node; "
                           "hidden heads concatenated, output heads averaged",
            "optimizer": "adam", "lr": 0.005, "weight_decay": 5e-4,
            "weight_decay_on": "all parameters", "epochs": 200},
}

# GAT's per-destination maximum uses scatter_reduce, which torch 1.13 calls beta on every run.
warnings.filterwarnings("ignore", message=r"scatter_reduce\(\) is in beta")

RELU_GAIN = math.sqrt(2.0)  # torch.nn.init.calculate_gain("relu"), as the DGL layers use

# Features with at most this share of non-zeros are kept as a sparse tensor, as Kipf's
# reference keeps Cora's. Dropout then draws random numbers for the stored values only, which
# is the same distribution (a dropped zero stays zero) at a fraction of the cost: on Debian's
# CPU torch, drawing a dense dropout mask costs more than the rest of a Cora epoch together.
SPARSE_FEATURES_MAX_DENSITY = 0.25


def load_dataset(path, row_normalize):
    """Reads a Strata dataset (docs/format.md) into torch tensors.

    Returns a dict with x [N, D] float32, y [N] int64, the train/val/test ids, and the edge
    list as src, dst int64 arrays (edge src -> dst, one entry per stored edge)."""
    meta = json.load(open(os.path.join(path, "meta.json")))
    n, d = meta["num_nodes"], meta["feature_dim"]
    idt = np.uint32 if meta["node_id_bytes"] == 4 else np.uint64
    fdt = np.float32 if meta["feature_dtype"] == "float32" else np.float16

    indptr = np.fromfile(os.path.join(path, "graph/indptr.bin"), dtype=np.uint64).astype(np.int64)
    src = np.fromfile(os.path.join(path, "graph/indices.bin"), dtype=idt).astype(np.int64)
    # CSC: indices[indptr[v] .. indptr[v+1]) are v's in-neighbours, so v is each edge's dst.
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))

    raw = np.fromfile(os.path.join(path, "features.bin"), dtype=np.uint8)
    rows = raw[: n * meta["row_stride_bytes"]].reshape(n, -1)
    x = rows[:, : d * np.dtype(fdt).itemsize].view(fdt).astype(np.float32)
    if row_normalize:
        # Kipf's preprocess_features: divide by the row's L1 norm; all-zero rows stay zero.
        norm = np.abs(x).sum(axis=1, keepdims=True)
        x = np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)

    labels = np.fromfile(os.path.join(path, "labels.bin"), dtype=np.int32).astype(np.int64)
    split = {name: np.fromfile(os.path.join(path, f"split/{name}.bin"), dtype=idt).astype(np.int64)
             for name in ("train", "val", "test")}
    for name, ids in split.items():
        if (labels[ids] < 0).any():
            sys.exit(f"{path}: split/{name}.bin holds unlabeled nodes")

    t = torch.from_numpy
    features = t(x)
    if np.count_nonzero(x) <= SPARSE_FEATURES_MAX_DENSITY * x.size:
        features = features.to_sparse()
    return {"n": n, "num_classes": meta["num_classes"], "x": features, "y": t(labels),
            "src": t(src), "dst": t(dst), **{name: t(ids) for name, ids in split.items()}}


def dropout(h, p, training):
    """F.dropout that, for a sparse h, drops stored values only (see SPARSE_FEATURES_MAX_DENSITY)."""
    if h.is_sparse:
        return torch.sparse_coo_tensor(h.indices(), F.dropout(h.values(), p, training), h.shape)
    return F.dropout(h, p, training)


def sparse_adjacency(n, src, dst, values):
    """The N x N matrix with values[e] at (dst[e], src[e]): row d aggregates d's in-edges.
    Repeated (dst, src) pairs are summed, so every stored edge counts once."""
    return torch.sparse_coo_tensor(torch.stack([dst, src]), values, (n, n)).coalesce()


def glorot(*shape, gain):
    """A parameter initialised with torch's xavier_uniform_, which takes the fans of a 3-D
    tensor (a, b, c) as fan_in = b*c and fan_out = a*c, exactly as DGL's layers get them."""
    w = torch.empty(*shape)
    torch.nn.init.xavier_uniform_(w, gain=gain)
    return torch.nn.Parameter(w)


class StrataDropout:
    """The masks Strata's full-graph path draws (strata_streams.py), in place of torch's: the
    input dropout on the features' non-zeros, the dropout after layer l on its stream."""

    def __init__(self, seed):
        self.seed = seed
        self.epoch = 0

    def __call__(self, h, p, layer):
        step = streams.step_seed(self.seed, self.epoch)
        if layer == 0:
            dense = h.to_dense() if h.is_sparse else h
            mask = streams.input_nonzero_mask(dense.numpy(), p, step)
        else:
            mask = streams.row_mask(streams.mix_seed(step, 2 * (layer - 1) + 2), 0, h.shape[0],
                                    h.shape[1], p)
        return (h.to_dense() if h.is_sparse else h) * torch.from_numpy(mask).float()


class GCN(torch.nn.Module):
    def __init__(self, g, dims, r):
        super().__init__()
        deg = torch.bincount(g["dst"], minlength=g["n"]).float() + 1  # in-degree + self loop
        loops = torch.arange(g["n"])
        src, dst = torch.cat([g["src"], loops]), torch.cat([g["dst"], loops])
        self.adj = sparse_adjacency(g["n"], src, dst, (deg[src] * deg[dst]).rsqrt())
        self.weights = torch.nn.ParameterList(glorot(a, b, gain=1.0) for a, b in zip(dims, dims[1:]))
        self.r = r
        self.strata_dropout = None  # a StrataDropout replaces torch's masks

    def decayed_parameters(self):
        return [self.weights[0]]

    def strata_init(self, seed):
        """Strata's initial weights for `seed`: layer l's from GlorotUniform(MixSeed(seed, l))."""
        with torch.no_grad():
            for l, w in enumerate(self.weights):
                values = streams.glorot_uniform(w.shape[0], w.shape[1], streams.mix_seed(seed, l))
                w.copy_(torch.from_numpy(values.astype(np.float32)))

    def alive_hidden_units(self, x):
        """How many of the first layer's units are positive for some node (eval mode): on wide,
        raw inputs the first steps can push a unit below zero for every node, where it stays."""
        with torch.no_grad():
            h = F.relu(self.adj @ (x @ self.weights[0]))
        return int(((h > 0).sum(0) > 0).sum())

    def forward(self, h):
        for i, w in enumerate(self.weights):
            p = self.r["input_dropout"] if i == 0 else self.r["dropout"]
            if self.training and p > 0 and self.strata_dropout is not None:
                h = self.strata_dropout(h, p, i)
            else:
                h = dropout(h, p, self.training)
            # Kipf's order: transform first, then aggregate the (narrower) result.
            h = self.adj @ (h @ w)
            if i < len(self.weights) - 1:
                h = F.relu(h)
        return h


class SAGE(torch.nn.Module):
    def __init__(self, g, dims, r):
        super().__init__()
        deg = torch.bincount(g["dst"], minlength=g["n"]).float()
        # Rows of a node without in-edges are empty, so its mean is 0.
        self.mean = sparse_adjacency(g["n"], g["src"], g["dst"], 1.0 / deg[g["dst"]])
        pairs = list(zip(dims, dims[1:]))
        self.w_self = torch.nn.ParameterList(glorot(a, b, gain=RELU_GAIN) for a, b in pairs)
        self.w_neigh = torch.nn.ParameterList(glorot(a, b, gain=RELU_GAIN) for a, b in pairs)
        self.bias = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(b)) for _, b in pairs)
        self.r = r

    def decayed_parameters(self):
        return list(self.parameters())

    def forward(self, h):
        for i in range(len(self.w_self)):
            p = self.r["input_dropout"] if i == 0 else self.r["dropout"]
            h = dropout(h, p, self.training)
            w = self.w_neigh[i]
            # Mean and the linear map commute; like DGL, aggregate the narrower side.
            neigh = self.mean @ (h @ w) if w.shape[0] > w.shape[1] else (self.mean @ h) @ w
            h = h @ self.w_self[i] + neigh + self.bias[i]
            if i < len(self.w_self) - 1:
                h = F.relu(h)
        return h


class GAT(torch.nn.Module):
    def __init__(self, g, dims, r):
        super().__init__()
        loops = torch.arange(g["n"])
        # DGL's add_self_loop: one more d -> d edge for every node, even where one exists.
        self.src, self.dst = torch.cat([g["src"], loops]), torch.cat([g["dst"], loops])
        self.n = g["n"]
        heads = [r["heads"]] * (len(dims) - 2) + [r["out_heads"]]
        ins = [dims[0]] + [h * f for h, f in zip(heads[:-1], dims[1:-1])]
        self.shapes = list(zip(heads, dims[1:]))
        self.w = torch.nn.ParameterList(glorot(a, h * f, gain=RELU_GAIN) for a, (h, f) in zip(ins, self.shapes))
        self.a_l = torch.nn.ParameterList(glorot(1, h, f, gain=RELU_GAIN) for h, f in self.shapes)
        self.a_r = torch.nn.ParameterList(glorot(1, h, f, gain=RELU_GAIN) for h, f in self.shapes)
        self.bias = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(h * f)) for h, f in self.shapes)
        self.r = r

    def decayed_parameters(self):
        return list(self.parameters())

    def layer(self, i, h):
        heads, f = self.shapes[i]
        src, dst = self.src, self.dst
        z = (h @ self.w[i]).view(self.n, heads, f)
        el, er = (z * self.a_l[i]).sum(-1), (z * self.a_r[i]).sum(-1)  # [N, heads]
        e = F.leaky_relu(el[src] + er[dst], self.r["negative_slope"])    # [E, heads]
        # Edge softmax over each dst's in-edges. Subtracting the per-dst maximum only keeps
        # exp() finite; softmax does not depend on it, so it needs no gradient.
        top = torch.full((self.n, heads), -math.inf).scatter_reduce(
            0, dst[:, None].expand_as(e), e.detach(), "amax")
        ex = torch.exp(e - top[dst])
        alpha = ex / torch.zeros(self.n, heads).index_add(0, dst, ex)[dst]
        alpha = F.dropout(alpha, self.r["attention_dropout"], self.training)
        out = torch.zeros(self.n, heads, f).index_add(0, dst, alpha[..., None] * z[src])
        return out + self.bias[i].view(heads, f)

    def forward(self, h):
        last = len(self.shapes) - 1
        for i in range(last + 1):
            p = self.r["input_dropout"] if i == 0 else self.r["dropout"]
            h = self.layer(i, dropout(h, p, self.training))
            # Hidden heads are concatenated then ELU'd; the output heads are averaged.
            h = F.elu(h.flatten(1)) if i < last else h.mean(1)
        return h


MODELS = {"gcn": GCN, "sage": SAGE, "gat": GAT}


def accuracy(logits, y, ids):
    return (logits[ids].argmax(1) == y[ids]).sum().item() / len(ids)


def train(g, model_name, recipe, seed, strata_init=False, strata_dropout=False):
    """Trains one model on the loaded graph g; returns the per-epoch record as a dict.
    strata_init and strata_dropout (GCN only) take Strata's initial weights and full-graph
    dropout masks for `seed` instead of torch's draws."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    r = recipe
    dims = [g["x"].shape[1]] + [r["hidden"]] * (r["layers"] - 1) + [g["num_classes"]]
    model = MODELS[model_name](g, dims, r)
    if (strata_init or strata_dropout) and model_name != "gcn":
        sys.exit("--strata-init and --strata-dropout are for --model gcn")
    if strata_init:
        model.strata_init(seed)
    if strata_dropout:
        model.strata_dropout = StrataDropout(seed)
    decayed = {id(p) for p in model.decayed_parameters()}
    groups = [{"params": [p for p in model.parameters() if id(p) in decayed], "weight_decay": r["weight_decay"]},
              {"params": [p for p in model.parameters() if id(p) not in decayed], "weight_decay": 0.0}]
    opt = torch.optim.Adam([grp for grp in groups if grp["params"]], lr=r["lr"])

    x, y = g["x"], g["y"]
    losses, val, test = [], [], []
    start = time.perf_counter()
    for epoch in range(r["epochs"]):
        if strata_dropout:
            model.strata_dropout.epoch = epoch
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x)[g["train"]], y[g["train"]])
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the loss of the forward pass this step was taken from
        model.eval()
        with torch.no_grad():
            logits = model(x)
        val.append(accuracy(logits, y, g["val"]))
        test.append(accuracy(logits, y, g["test"]))
    elapsed = time.perf_counter() - start

    best = int(np.argmax(val))  # the first epoch with the highest validation accuracy
    alive = {"alive_hidden_units": model.alive_hidden_units(x)} if model_name == "gcn" else {}
    return {"train_loss": losses, "val_acc": val, **alive,
            "final_val_acc": val[-1], "final_test_acc": test[-1],
            "best_epoch": best, "best_val_acc": val[best], "best_test_acc": test[best],
            "epoch_time_s": elapsed / r["epochs"]}


def recipe_for(model_name, epochs=None, hidden=None, lr=None, weight_decay=None, dropout=None):
    """The model's recipe with the given overrides; dropout replaces every dropout rate."""
    r = dict(RECIPES[model_name])
    for key, value in (("epochs", epochs), ("hidden", hidden), ("lr", lr), ("weight_decay", weight_decay)):
        if value is not None:
            r[key] = value
    if dropout is not None:
        for key in ("dropout", "input_dropout", "attention_dropout"):
            if key in r:
                r[key] = dropout
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--model", required=True, choices=sorted(RECIPES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--row-normalize", action="store_true", help="divide each feature row by its L1 norm")
    ap.add_argument("--hidden", type=int, help="hidden features (per head for gat)")
    ap.add_argument("--lr", type=float)
    ap.add_argument("--weight-decay", type=float)
    ap.add_argument("--dropout", type=float, help="every dropout of the recipe (input, hidden, attention)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads; more than one was many times slower on a busy 2-core machine")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--strata-init", action="store_true",
                    help="gcn: start from the weights Strata initialises for --seed")
    ap.add_argument("--strata-dropout", action="store_true",
                    help="gcn: drop what Strata's full-graph path drops for --seed")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    recipe = recipe_for(a.model, a.epochs, a.hidden, a.lr, a.weight_decay, a.dropout)
    g = load_dataset(a.dataset, a.row_normalize)
    result = train(g, a.model, recipe, a.seed, a.strata_init, a.strata_dropout)
    if a.json:
        print(json.dumps({"model": a.model, "dataset": a.dataset, "seed": a.seed,
                          "epochs": recipe["epochs"], "row_normalize": a.row_normalize,
                          "recipe": recipe, **result}))
        return
    for epoch, (loss, acc) in enumerate(zip(result["train_loss"], result["val_acc"])):
        print(f"epoch {epoch:4d}  train loss {loss:.4f}  val acc {acc:.4f}")
    alive = (f"; {result['alive_hidden_units']} of {recipe['hidden']} hidden units alive"
             if "alive_hidden_units" in result else "")
    print(f"final: val {result['final_val_acc']:.4f} test {result['final_test_acc']:.4f}; "
          f"best val {result['best_val_acc']:.4f} at epoch {result['best_epoch']} "
          f"(test {result['best_test_acc']:.4f}){alive}; "
          f"{result['epoch_time_s'] * 1e3:.1f} ms/epoch")


if __name__ == "__main__":
    main()
