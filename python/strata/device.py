"""Batches as torch tensors on a device: the loaders' `device=` and `prefetch=`.

On "cpu" a batch's tensors share the loader's buffers (torch.from_numpy): no copy. On "cuda"
the loader gathers features into one region of host memory allocated up front and
page-locked once (cudaHostRegister), so copies to the GPU are DMA transfers that need no
staging; each batch is copied on a side CUDA stream, non-blocking, `prefetch` batches ahead of
the one being trained, and the training stream waits on the batch's event (not on the whole
device) before it uses the tensors. A batch's host buffers are released only once its copy
has finished. The block arrays (about a tenth of a batch's bytes at 128 features) travel from
ordinary memory.

torch is imported only when a device is asked for: it is not a dependency of strata.
"""

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from strata import _strata

if TYPE_CHECKING:
    import torch


def _torch():
    try:
        import torch
    except ImportError as e:
        raise _strata.InputError(f"device= needs PyTorch, which does not import: {e}") from None
    return torch


@dataclass(frozen=True)
class TensorBlock:
    """A Block (strata.Block) as torch tensors: CSR by destination, local ids, int32 offsets
    and indices, int64 global ids of the sources; the destinations are the first num_dst."""

    indptr: "torch.Tensor"
    indices: "torch.Tensor"
    src_nodes: "torch.Tensor"
    num_dst: int
    edge_weights: "torch.Tensor" = None  # float32 per edge (LABOR), as strata.Block's

    @property
    def num_src(self):
        return int(self.src_nodes.shape[0])

    @property
    def num_edges(self):
        return int(self.indices.shape[0])


@dataclass
class DeviceBatch:
    """A batch as torch tensors on the loader's device: the host batch's fields (features,
    labels, seeds, input_nodes, blocks input layer first) plus its epoch, index and
    macro_batch. The features are float32, len(input_nodes) x feature_dim; ids int64."""

    features: "torch.Tensor"
    labels: "torch.Tensor"
    input_nodes: "torch.Tensor"
    blocks: list
    epoch: int
    index: int
    macro_batch: int
    nbytes: int = 0  # bytes the batch's tensors hold (those copied, on a GPU)
    history: "HaloHistory" = None  # method="pbs" only

    @property
    def seeds(self):
        return self.input_nodes[:self.num_seeds]

    @property
    def num_seeds(self):
        return self.blocks[-1].num_dst

    @property
    def num_layers(self):
        return len(self.blocks)

    def to_pyg(self):
        """The batch in the form PyG's message-passing layers take (strata.pyg.PygBatch)."""
        from strata.pyg import to_pyg
        return to_pyg(self)


def host_tensors(batch):
    """A host batch's arrays as CPU tensors sharing its buffers, in a flat list: features,
    labels, input_nodes, then indptr, indices, src_nodes, edge weights (empty when none) of each
    layer, then stale, stale_rows,
    fresh of each hidden layer with history (method="pbs"), then the positions of the gathered
    rows when the batch left some out (Batch.gathered)."""
    torch = _torch()
    arrays = [batch.features, batch.labels, batch.input_nodes]
    for block in batch.blocks:
        weights = block.edge_weights
        arrays += [block.indptr, block.indices, block.src_nodes,
                   np.empty(0, np.float32) if weights is None else weights]
    for layer in range(batch.history_layers):
        arrays += list(batch.history(layer))
    if batch.gathered is not None:
        arrays.append(batch.gathered)
    return [torch.from_numpy(a) for a in arrays]


def assemble(tensors, batch, cache=None):
    """The DeviceBatch of host batch `batch` from its tensors, ordered as host_tensors gives;
    a batch that left rows out gets them from `cache` (a DeviceFeatureCache)."""
    blocks = []
    for layer, block in enumerate(batch.blocks):
        indptr, indices, src_nodes, weights = tensors[3 + 4 * layer:7 + 4 * layer]
        blocks.append(TensorBlock(indptr, indices, src_nodes, block.num_dst,
                                  None if block.edge_weights is None else weights))
    features = tensors[0]
    if batch.gathered is not None:
        features = cache.assemble(tensors[2], tensors[-1], features)
    first = 3 + 4 * len(batch.blocks)
    history = None
    if batch.history_layers:
        history = HaloHistory(batch, [tuple(tensors[first + 3 * l:first + 3 * l + 3])
                                      for l in range(batch.history_layers)])
    return DeviceBatch(features=features, labels=tensors[1], input_nodes=tensors[2],
                       blocks=blocks, epoch=batch.epoch, index=batch.index,
                       macro_batch=batch.macro_batch,
                       nbytes=sum(t.element_size() * t.nelement() for t in tensors),
                       history=history)


class HaloHistory:
    """method="pbs": what a training step exchanges with the historical embeddings, for each
    hidden layer i (the input of model layer i + 1): the rows of that input to take from the
    table (stale: halo nodes, no gradient through them) and those whose fresh values go back.
    In the model, after layer i's activation:

        history.keep_fresh(i, h)        # the activation, before dropout
        h = F.dropout(h, p, training)
        h = history.put_stale(i, h)

    and after the step, history.commit(). The loader writes a macro-batch's rows back once all
    its batches are committed (or dropped)."""

    def __init__(self, host, layers):
        self._host = host  # the C++ batch, to commit through
        self.layers = layers  # per hidden layer: (stale, stale_rows, fresh) tensors
        self._fresh = [None] * len(layers)

    def keep_fresh(self, layer, h):
        self._fresh[layer] = h[self.layers[layer][2].long()].detach()

    def put_stale(self, layer, h):
        stale, rows, _ = self.layers[layer]
        if len(stale) == 0:
            return h
        return h.index_copy(0, stale.long(), rows.to(h.dtype))

    def commit(self):
        if any(f is None for f in self._fresh):
            raise _strata.InputError("commit() before keep_fresh() of every hidden layer")
        self._host.commit_history([f.float().cpu().numpy() for f in self._fresh])


@dataclass
class InFlight:
    """A batch on its way to the device: its tensors there, what the consumer must wait for
    before using them, and the host batch, which must live until the copy has finished."""

    batch: DeviceBatch
    host: object
    done: object = None   # the copy's end event (CUDA); None when there is no copy
    start: object = None  # the copy's start event (CUDA), for its duration


class CpuTransfer:
    """device="cpu": the tensors are the host buffers themselves."""

    copies = False

    def start(self, host, cache=None):
        return InFlight(assemble(host_tensors(host), host, cache), host)

    def hand_over(self, flight):
        pass

    def finished(self, flight):
        return True

    def copy_seconds(self, flight):
        return 0.0


class CudaTransfer:
    """A side stream that copies batches to `device` while the current stream computes."""

    copies = True

    def __init__(self, device):
        torch = _torch()
        self._torch = torch
        self.device = device
        self.stream = torch.cuda.Stream(device=device)

    def start(self, host, cache=None):
        torch = self._torch
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(self.stream):
            begin.record(self.stream)
            tensors = [t.to(self.device, non_blocking=True) for t in host_tensors(host)]
            # The cache's gather runs on the side stream too, after the copy.
            batch = assemble(tensors, host, cache)
            end.record(self.stream)
        return InFlight(batch, host, done=end, start=begin)

    def hand_over(self, flight):
        # The consumer's stream waits for the copy, not the host; the tensors were allocated on
        # the side stream, so their memory must not be reused before the consumer is done.
        current = self._torch.cuda.current_stream(self.device)
        current.wait_event(flight.done)
        for tensor in _batch_tensors(flight.batch):
            tensor.record_stream(current)

    def finished(self, flight):
        return flight.done.query()

    def copy_seconds(self, flight):
        return flight.start.elapsed_time(flight.done) / 1000.0


def _batch_tensors(batch):
    yield from (batch.features, batch.labels, batch.input_nodes)
    for block in batch.blocks:
        yield from (block.indptr, block.indices, block.src_nodes)
    if batch.history is not None:
        for layer in batch.history.layers:
            yield from layer


def resolve_device(device):
    """A torch.device from `device` ("cpu", "cuda", "cuda:1" or a torch.device); an
    InputError in one line for a device this torch cannot use."""
    torch = _torch()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise _strata.InputError(f"device={device!r} is not a torch device: {e}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise _strata.InputError(
                f"device={device!r} but this PyTorch ({torch.__version__}) has no CUDA device; "
                "use device='cpu'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise _strata.InputError(f"device={device!r} but there are only "
                                     f"{torch.cuda.device_count()} CUDA devices")
    elif dev.type != "cpu":
        raise _strata.InputError(f"device={device!r}: strata feeds 'cpu' and 'cuda' devices")
    return dev


def transfer_for(device):
    """The transfer of a resolved device."""
    return CudaTransfer(device) if device.type == "cuda" else CpuTransfer()


class PinnedRegion:
    """The loader's output region page-locked for CUDA (cudaHostRegister), until release().
    If the driver refuses, says so once on stderr and leaves the region pageable: copies then
    still work, but each waits for the host."""

    _warned = False

    def __init__(self, address, nbytes):
        import torch
        self._cudart = torch.cuda.cudart()
        self._address = address
        try:
            code = self._cudart.cudaHostRegister(address, nbytes, 0)
        except AttributeError:  # a torch without the binding
            code = "this torch does not bind cudaHostRegister"
        self.pinned = not isinstance(code, str) and int(code) == 0
        if not self.pinned and not PinnedRegion._warned:
            PinnedRegion._warned = True
            print(f"strata: cudaHostRegister of the loader's {nbytes >> 20} MiB of batch buffers "
                  f"failed ({code}); copies to the GPU use pageable memory", file=sys.stderr)

    def release(self):
        if self.pinned:
            self.pinned = False
            self._cudart.cudaHostUnregister(self._address)


@dataclass
class DeviceCounters:
    """What feeding the device cost in one epoch: batches handed out, bytes copied to the
    device, the copies' time on the side stream, the time the step waited for batches (the
    host loader's stall plus issuing copies), and with a GPU cache its rows, the input rows
    looked up in it and found there, and the bytes that did not cross PCIe for that."""

    batches: int = 0
    bytes_copied: int = 0
    copy_s: float = 0.0
    wait_s: float = 0.0
    pinned: bool = False
    gpu_cache_rows: int = 0
    gpu_lookups: int = 0
    gpu_hits: int = 0
    gpu_bytes_saved: int = 0

    def count(self, host, row_bytes):
        """Adds a host batch's GPU-cache lookups."""
        if host.gathered is None:
            return
        lookups = len(host.input_nodes)
        hits = lookups - len(host.gathered)
        self.gpu_lookups += lookups
        self.gpu_hits += hits
        self.gpu_bytes_saved += hits * row_bytes

    def as_dict(self):
        out = dict(self.__dict__)
        out["gpu_hit_rate"] = self.gpu_hits / self.gpu_lookups if self.gpu_lookups else 0.0
        return out


@dataclass
class DeviceEpoch:
    """One epoch's iterator of DeviceBatches over a host epoch iterator: keeps `prefetch`
    batches in flight to the device ahead of the one handed out."""

    host: object  # the host epoch's iterator (strata.loader._Epoch)
    transfer: object
    prefetch: int
    counters: DeviceCounters
    cache: object = None  # a DeviceFeatureCache, when the loader has one
    _pending: deque = field(default_factory=deque)  # in flight, oldest first
    _retiring: deque = field(default_factory=deque)  # handed out, copies maybe unfinished
    _exhausted: bool = False

    def __iter__(self):
        return self

    def __next__(self):
        started = time.perf_counter()
        # Without a copy there is nothing to overlap: batches ahead would only hold memory.
        ahead = self.prefetch if self.transfer.copies else 0
        while not self._exhausted and len(self._pending) <= ahead:
            host = next(self.host, None)
            if host is None:
                self._exhausted = True
                break
            self._pending.append(self.transfer.start(host, self.cache))
            if self.cache is not None:
                self.counters.count(host, self.cache.row_bytes)
        self._retire(wait=False)
        if not self._pending:
            self._retire(wait=True)
            self.counters.wait_s += time.perf_counter() - started
            raise StopIteration
        flight = self._pending.popleft()
        self.transfer.hand_over(flight)
        self._retiring.append(flight)
        self.counters.batches += 1
        if self.transfer.copies:
            self.counters.bytes_copied += flight.batch.nbytes
        self.counters.wait_s += time.perf_counter() - started
        return flight.batch

    def _retire(self, wait):
        """Drops the host batches whose copies have finished (all of them when `wait`: at the
        end of the epoch, waiting for the copies)."""
        while self._retiring and (wait or self.transfer.finished(self._retiring[0])):
            flight = self._retiring.popleft()
            if wait and flight.done is not None:
                flight.done.synchronize()
            self.counters.copy_s += self.transfer.copy_seconds(flight)

    def __del__(self):
        self.close()

    def close(self):
        """Stops the epoch once every copy already issued has finished (the host buffers they
        read must not be reused before)."""
        self._retiring.extend(self._pending)
        self._pending.clear()
        self._retire(wait=True)
        self.host.close()
