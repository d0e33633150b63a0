"""The GPU cache tier of the loaders' `gpu_cache=`: the hottest feature rows held in device
memory, so that only the other rows of a batch cross PCIe.

At the start the loader ranks the nodes (`gpu_cache_policy`: "degree", the default, which
ranked best on make run's graph (docs/python.md); "presample" counts the rows presampled
batches read, as GNNLab does; "rpr" is reverse PageRank from the seeds), reads the top rows once and copies them to the device, with a slot map (node id ->
row of the cache, -1 for none). From then on the loader's fetch thread leaves those rows out
of every batch (Batch.gathered names the rows it did gather), and each batch's features are
assembled on the device: every row taken from the cache, then the gathered rows copied over
theirs (index_copy_), in stream order after the batch's copy. No host synchronisation.

GPU memory is a budget of its own (`gpu_memory_budget`): the cache's rows and its slot map
(4 bytes per node) must fit in it; by default it is the device's free memory at the start,
less a quarter for the model and the batches.
"""

from strata import _strata

# Rows read from the host and copied to the device at a time while the cache fills.
FILL_CHUNK_ROWS = 1 << 16


class DeviceFeatureCache:
    """The hottest rows of a loader's dataset on `device`; see the module's docstring."""

    def __init__(self, loader, device, cache_bytes, policy, memory_budget):
        import torch
        self._torch = torch
        meta = loader.dataset.meta
        nodes, dim = meta["num_nodes"], meta["feature_dim"]
        self.row_bytes = 4 * dim
        rows = min(nodes, cache_bytes // self.row_bytes)
        map_bytes = 4 * nodes
        if memory_budget is None:
            memory_budget = default_budget(torch, device)
        need = rows * self.row_bytes + map_bytes
        if need > memory_budget:
            raise _strata.InputError(
                f"gpu_cache of {rows} rows ({rows * self.row_bytes / 2**20:.0f} MiB) and its slot "
                f"map ({map_bytes / 2**20:.0f} MiB) need more than gpu_memory_budget "
                f"({memory_budget / 2**20:.0f} MiB)")
        self.bytes = need
        ids = loader.hottest_nodes(policy, rows)
        self.rows = torch.empty((len(ids), dim), dtype=torch.float32, device=device)
        reader = loader.row_reader()  # one store for the whole fill
        for start in range(0, len(ids), FILL_CHUNK_ROWS):
            chunk = ids[start:start + FILL_CHUNK_ROWS]
            self.rows[start:start + len(chunk)] = torch.from_numpy(reader.gather(chunk)).to(device)
        del reader  # its buffers go back to the budget
        self.slot = torch.full((nodes,), -1, dtype=torch.int32, device=device)
        self.slot[torch.from_numpy(ids).to(device)] = torch.arange(
            len(ids), dtype=torch.int32, device=device)
        loader.leave_out_rows(ids)

    def __len__(self):
        return int(self.rows.shape[0])

    def assemble(self, input_nodes, gathered, rows):
        """The batch's features on the device: the cached rows of `input_nodes`, with the
        `rows` the loader gathered (at positions `gathered`) in place of the others."""
        slots = self.slot[input_nodes].long().clamp_(min=0)
        features = self.rows.index_select(0, slots)
        if rows.shape[0] > 0:
            features.index_copy_(0, gathered.long(), rows)
        return features


def default_budget(torch, device):
    """Three quarters of the device's free memory now (all of the host's on a CPU device)."""
    if device.type != "cuda":
        return float("inf")
    free, _ = torch.cuda.mem_get_info(device)
    return free * 3 // 4
