"""strata.NeighborLoader: an iterable of sampled mini-batches with their input features.

The batches are those `strata train` samples (the same sampler, feature store, cache and
pipeline), produced ahead of the consumer on the loader's own threads, which run without the
GIL, so loading overlaps the Python training step.
"""

import weakref
from dataclasses import dataclass

import numpy as np

from strata import _strata
from strata import device as _device


@dataclass(frozen=True)
class Block:
    """One layer of a batch, in local ids: edges from source to destination nodes, stored as CSR
    by destination (the sources of destination d are indices[indptr[d]:indptr[d + 1]]). The
    destinations are the first num_dst source nodes. Arrays are views into the batch.
    edge_weights (float32, one per edge) are LABOR's inverse inclusion probabilities, for the
    estimators of the full neighbourhood (a weighted mean: mean_of_neighbours in
    examples/train_sage.py); None when the sampler weighs no edge."""

    indptr: np.ndarray  # int32, num_dst + 1
    indices: np.ndarray  # int32, local source ids
    src_nodes: np.ndarray  # int64 global ids
    num_dst: int
    edge_weights: np.ndarray = None

    @property
    def num_src(self):
        return len(self.src_nodes)

    @property
    def num_edges(self):
        return len(self.indices)


def _blocks(batch):
    blocks = []
    for layer in range(batch.num_layers):
        indptr, indices, src_nodes, num_dst, weights = batch.block_arrays(layer)
        blocks.append(Block(indptr, indices, src_nodes, num_dst,
                            weights if len(weights) else None))
    return blocks


def _to_pyg(batch):
    """The batch in the form PyG's layers take (strata.pyg.PygBatch), as CPU tensors sharing
    the batch's buffers."""
    from strata.pyg import to_pyg
    return to_pyg(batch)


# Batch.blocks, input layer first (defined here to return the dataclass above), and to_pyg.
_strata.Batch.blocks = property(_blocks)
_strata.Batch.to_pyg = _to_pyg


class NeighborLoader:
    """Mini-batches of a split with uniform neighbour sampling, as `strata train` draws them.

    Each batch has `seeds`, their `labels` (int64), `input_nodes`, `features` (float32,
    len(input_nodes) x feature_dim) and `blocks` (one Block per layer, input layer first).
    Arrays are views of the batch's own buffers: no copy is made, torch.from_numpy shares
    them, and they stay valid for as long as any of them (or the batch) is referenced, however
    the loader moves on. Holding batches holds their memory, which counts against the budget.

    Epochs: each `iter()` starts the next epoch (0, 1, ...) unless set_epoch() named one, and
    batches depend only on (seed, epoch, batch index), so the same seed gives the same batches
    whatever the feature store and the run-ahead. With `rank`/`world_size` each rank takes
    every world_size-th seed of the epoch's order, padded by wrapping around as torch's
    DistributedSampler does, so all ranks get the same number of batches.

    Stopping early (break, an exception, KeyboardInterrupt) stops the loader's threads once
    the iterator is dropped; close() (or `with loader:`) releases everything.

    With `device` ("cpu", "cuda", "cuda:1" or a torch.device) batches are DeviceBatches: torch
    tensors on that device (strata/device.py). On "cpu" they share the batch buffers. On
    "cuda" the features are gathered into `pinned_memory` bytes of page-locked host memory
    (charged to the budget; "auto" sizes it for the run-ahead and `prefetch` + 2 batches held
    while their copies run, within half the budget left), and
    each batch is copied on a side stream `prefetch` batches ahead of the step, which waits on
    the copy's event. The loader then waits while the consumer holds every pinned buffer, and
    says so rather than hang if it holds them all. stats()["device"] has the epoch's bytes
    copied, copy time and wait time.

    `gpu_cache` ("4G", bytes) keeps the hottest rows in device memory (strata/gpu_cache.py):
    the loader then neither reads nor copies them, and assembles each batch's features on the
    device. `gpu_cache_policy` ranks the rows ("degree", "presample", "rpr");
    `gpu_memory_budget` bounds the cache and its slot map (default: three quarters of the
    device's free memory). stats()["device"] adds the GPU hit rate and the bytes saved.
    """

    def __init__(self, dataset, fanouts, batch_size, split="train", shuffle=True, seed=0,
                 feature_store="direct", memory_budget="1G", drop_last=False, rank=0,
                 world_size=1, run_ahead=8, threads=2, row_normalize=False, device=None,
                 prefetch=2, pinned_memory="auto", gpu_cache=0, gpu_cache_policy="degree",
                 gpu_memory_budget=None, **options):
        """`dataset` is a strata.Dataset or a path. `fanouts` are listed from the input layer
        to the output layer (-1: all neighbours). `feature_store`: "direct" (direct I/O behind
        a tiered cache, for features larger than memory), "memory" or "mmap". `memory_budget`
        ("1G", "512M" or bytes) bounds the loader's memory. `device`, `prefetch` and
        `pinned_memory` as above (pinned_memory=0: none; a size on a CPU device gives the
        same region unpinned), and the GPU cache's `gpu_cache`, `gpu_cache_policy` and
        `gpu_memory_budget` (on a CPU device the same tier in host memory). `options`:
        cache_fraction, hot_share, hot_policy, cache_policy, io_depth, hidden, sampler
        ("neighbor" or "labor"), labor_importance (0, N or "star") and batch_dependency (as
        `strata train`'s options)."""
        path = dataset.path if isinstance(dataset, _strata.Dataset) else str(dataset)
        if prefetch < 0:
            raise _strata.InputError(f"prefetch must be 0 or more, not {prefetch}")
        self._device = None if device is None else _device.resolve_device(device)
        cache_bytes = _strata._byte_size(gpu_cache)
        if cache_bytes > 0 and self._device is None:
            raise _strata.InputError("gpu_cache= needs a device= to keep the rows on")
        on_gpu = self._device is not None and self._device.type == "cuda"
        auto = isinstance(pinned_memory, str) and pinned_memory == "auto"
        self._loader = _strata._NeighborLoader(
            path, list(fanouts), batch_size, split, shuffle, drop_last, rank, world_size, seed,
            feature_store, memory_budget, threads=threads, run_ahead=run_ahead,
            row_normalize=row_normalize, output_arena=0 if auto else pinned_memory,
            output_arena_batches=prefetch + 2 if auto and on_gpu else 0, **options)
        self._prefetch = prefetch
        self._pinned = None
        if on_gpu and self._loader.output_arena[1] > 0:
            self._pinned = _device.PinnedRegion(*self._loader.output_arena)
            # Unregistered before the C++ loader frees the region.
            weakref.finalize(self._loader, self._pinned.release)
        self._cache = None
        if cache_bytes > 0:
            from strata.gpu_cache import DeviceFeatureCache
            self._cache = DeviceFeatureCache(
                self._loader, self._device, cache_bytes, gpu_cache_policy,
                None if gpu_memory_budget is None else _strata._byte_size(gpu_memory_budget))
        self._counters = _device.DeviceCounters()
        self._next_epoch = 0
        self._active = lambda: None  # a weak reference to the running epoch's iterator

    @property
    def dataset(self):
        return self._loader.dataset

    @property
    def device(self):
        """The torch.device batches are on; None for numpy batches."""
        return self._device

    def __len__(self):
        return self._loader.batches_per_epoch

    def set_epoch(self, epoch):
        """Makes the next iteration epoch `epoch` (torch's DistributedSampler.set_epoch)."""
        self._next_epoch = epoch

    def __iter__(self):
        epoch = self._next_epoch
        self._next_epoch = epoch + 1
        self.close()
        iterator = _Epoch(self, epoch)
        if self._device is not None:
            self._counters = _device.DeviceCounters(
                pinned=self._pinned is not None and self._pinned.pinned,
                gpu_cache_rows=0 if self._cache is None else len(self._cache))
            iterator = _device.DeviceEpoch(iterator, _device.transfer_for(self._device),
                                           self._prefetch, self._counters, self._cache)
        # Weak, so that dropping the iterator (a break, an exception) stops the epoch.
        self._active = weakref.ref(iterator)
        return iterator

    def stats(self):
        """The feature store's counters (rows, reads, bytes, hit rate), the memory used, under
        "epoch" what the current (or just finished) epoch's stages have done, and with a
        device, under "device" what feeding it cost this epoch (DeviceCounters)."""
        stats = self._loader.stats()
        if self._device is not None:
            stats["device"] = self._counters.as_dict()
        return stats

    def close(self):
        """Stops the running epoch, if any, and releases what its pipeline holds."""
        iterator = self._active()
        if iterator is not None:
            iterator.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class MultistageLoader(NeighborLoader):
    """The batches of `strata train --multistage METHOD`: mini-batches sampled inside
    macro-batches that are read whole, double-buffered, while the previous one trains.

    method="partition" (Hanoi): a macro-batch is `macro_batch` partitions of a dataset written
    by `strata partition`, plus its hubs, read with large sequential reads. method="lbs"
    (Joestar's large-batch sampling, any dataset): a macro-batch is the sampled neighbourhood of
    `macro_batch` mini-batches' seeds (with `macro_fanouts`), gathered once. Each macro-batch
    is iterated `reuse` times (1..4), or with reuse="auto" up to 4 times, again only while the
    next macro-batch is still loading (the batches then depend on the disk's speed).
    method="pbs" (Joestar's partition-based sampling): partitions plus their halo, whose hidden
    rows come from historical embeddings: each batch has a `history` (strata.HaloHistory) the
    model must apply and commit (examples/train_sage.py shows how; `hidden` is the model's
    width, and prefetch is 0).
    macro_batch=0 takes the most whose two buffers fit the
    budget. Batches have the NeighborLoader's fields plus `macro_batch`; len() is an estimate.
    The training split; same seed, same batches, whatever the run-ahead. With `rank` and
    `world_size` (DDP) rank r takes macro-batches r, r + world_size, ... of each epoch, and
    every rank's epoch ends after as many batches as the rank with the fewest has, so that all
    take the same number of steps (a rank's batches are those one process would sample in the
    same macro-batches; adaptive reuse is one rank only).
    """

    def __init__(self, dataset, fanouts, batch_size, method="partition", macro_batch=0, reuse=1,
                 macro_fanouts=None, seed=0, memory_budget="1G", run_ahead=8, threads=2,
                 row_normalize=False, **options):
        if method == "pbs":
            # A step commits its history before the next batch is asked for: batches fetched
            # further ahead could wait for a write-back that waits for them.
            options["prefetch"] = 0
        super().__init__(dataset, fanouts, batch_size, seed=seed, feature_store="direct",
                         memory_budget=memory_budget, run_ahead=run_ahead, threads=threads,
                         row_normalize=row_normalize, multistage=method,
                         macro_batch=macro_batch, reuse=reuse,
                         macro_fanouts=list(macro_fanouts or []), **options)

    @property
    def macro_batch(self):
        """Partitions (or mini-batches) per macro-batch, as chosen from the budget."""
        return self._loader.macro_batch


class _Epoch:
    """The iterator of one epoch; dropping it (or close) stops the epoch's threads."""

    def __init__(self, owner, epoch):
        self._loader = owner._loader
        self.epoch = epoch
        self._loader.start_epoch(epoch)
        self._open = True

    def __iter__(self):
        return self

    def __next__(self):
        if not self._open:
            raise StopIteration
        batch = self._loader.next()
        if batch is None:
            self._open = False
            raise StopIteration
        return batch

    def close(self):
        if self._open:
            self._open = False
            self._loader.stop_epoch()

    def __del__(self):
        self.close()
