"""PyG interop: a Strata batch in the form PyG's message-passing layers take.

    for batch in strata.NeighborLoader(ds, [10, 10], 512, device="cuda"):
        data = batch.to_pyg()
        x = data.x
        for conv, (edge_index, size) in zip(convs, data.adjs):   # input layer first
            x = conv((x, x[:size[1]]), edge_index)                # bipartite, targets first
        loss = F.cross_entropy(x, data.y)

Why per-layer (edge_index, size) pairs and not one edge_index trimmed per hop: Strata samples
as DGL does, every layer's neighbourhood afresh for all of that layer's destinations (the seeds
get new neighbours in each layer), so the layers' edge sets are not nested. PyG's hierarchical
trimming (num_sampled_nodes / num_sampled_edges with trim_to_layer) assumes one sample per
node shared by every layer and would be wrong here. The pairs are those of PyG's classic
NeighborSampler (`adjs`), which SAGEConv, GATConv and every bipartite-capable layer take.
The node order is PyG's: seeds first, then each hop's new nodes, so `num_sampled_nodes` is
given too, for code that slices by hop.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, NamedTuple

if TYPE_CHECKING:
    import torch


class PygAdj(NamedTuple):
    """One layer: `edge_index` (2 x E, int64, row 0 the source and row 1 the target, local ids,
    PyG's source-to-target flow) and `size` = (num_src, num_dst); the targets are the first
    num_dst sources."""

    edge_index: "torch.Tensor"
    size: tuple


@dataclass
class PygBatch:
    """x: the input features (seeds first); y: the seeds' labels (int64, -1 for none);
    n_id: the global ids of x's rows; batch_size: the seed count (the first rows of the last
    layer's output); adjs: one PygAdj per layer, input layer first; num_sampled_nodes: nodes
    per hop, seeds first."""

    x: "torch.Tensor"
    y: "torch.Tensor"
    n_id: "torch.Tensor"
    batch_size: int
    adjs: List[PygAdj]
    num_sampled_nodes: List[int]


def edge_index_of(block):
    """The COO edge_index (2 x E, int64, source row first) of a TensorBlock."""
    import torch
    indptr = block.indptr.long()
    degree = indptr[1:] - indptr[:-1]
    targets = torch.repeat_interleave(torch.arange(block.num_dst, device=indptr.device), degree)
    return torch.stack([block.indices.long(), targets])


def to_pyg(batch):
    """A PygBatch of `batch`: a strata.Batch (tensors sharing its buffers, on the CPU) or a
    DeviceBatch (tensors on its device)."""
    from strata.device import DeviceBatch, assemble, host_tensors
    if not isinstance(batch, DeviceBatch):
        batch = assemble(host_tensors(batch), batch)
    adjs = [PygAdj(edge_index_of(b), (b.num_src, b.num_dst)) for b in batch.blocks]
    hops = [batch.num_seeds]
    for block in reversed(batch.blocks):
        hops.append(block.num_src - block.num_dst)
    return PygBatch(x=batch.features, y=batch.labels, n_id=batch.input_nodes,
                    batch_size=batch.num_seeds, adjs=adjs, num_sampled_nodes=hops)
