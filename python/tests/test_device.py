"""The loaders' device=: torch tensors sharing the batch buffers on the CPU, the pinned output
region the fetch thread fills, the prefetching of copies (checked with a recording transfer in
place of CUDA's), the counters, and one-line errors for devices that cannot be used."""

import gc

import numpy as np
import pytest
import torch

import strata
from strata import device as strata_device


def host_batches(small, **options):
    return list(strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                      **options))


@pytest.mark.parametrize("sampler", [{}, {"sampler": "labor", "labor_importance": 2}])
def test_cpu_batches_are_tensors_sharing_the_buffers_with_the_numpy_batches_values(small,
                                                                                   sampler):
    expected = host_batches(small, **sampler)
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   device="cpu", **sampler)
    assert loader.device == torch.device("cpu")
    got = list(loader)
    assert len(got) == len(expected) > 1
    for want, batch in zip(expected, got):
        assert isinstance(batch, strata.DeviceBatch)
        assert batch.features.dtype == torch.float32 and batch.labels.dtype == torch.int64
        np.testing.assert_array_equal(batch.features.numpy(), want.features)
        np.testing.assert_array_equal(batch.labels.numpy(), want.labels)
        np.testing.assert_array_equal(batch.seeds.numpy(), want.seeds)
        np.testing.assert_array_equal(batch.input_nodes.numpy(), want.input_nodes)
        assert batch.num_seeds == len(want.seeds)
        for block, host in zip(batch.blocks, want.blocks):
            np.testing.assert_array_equal(block.indptr.numpy(), host.indptr)
            np.testing.assert_array_equal(block.indices.numpy(), host.indices)
            np.testing.assert_array_equal(block.src_nodes.numpy(), host.src_nodes)
            assert block.num_dst == host.num_dst
            if host.edge_weights is None:
                assert block.edge_weights is None
            else:
                np.testing.assert_array_equal(block.edge_weights.numpy(), host.edge_weights)
    stats = loader.stats()["device"]
    assert stats["batches"] == len(got)
    assert stats["bytes_copied"] == 0 and stats["copy_s"] == 0  # nothing was copied
    assert stats["wait_s"] > 0


def test_the_fetch_thread_fills_the_output_region_and_it_is_charged(small):
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   device="cpu", pinned_memory="4M")
    address, size = loader._loader.output_arena
    assert size == 4 << 20 and address % 4096 == 0
    assert loader.stats()["memory_used_bytes"] >= size
    expected = host_batches(small)
    for want, batch in zip(expected, loader):
        # Zero-copy: the tensor is the loader's buffer, inside the region.
        assert address <= batch.features.data_ptr()
        end = batch.features.data_ptr() + batch.features.element_size() * batch.features.nelement()
        assert end <= address + size
        np.testing.assert_array_equal(batch.features.numpy(), want.features)


def test_holding_every_pinned_buffer_is_an_input_error_not_a_hang(small):
    widest = max(b.features.nbytes for b in host_batches(small))
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   pinned_memory=widest * 3 // 2)
    held = []
    with pytest.raises(strata.InputError, match="held by batches still referenced"):
        for batch in loader:
            held.append(batch)
    assert held
    loader.close()


class RecordingTransfer:
    """A transfer that copies (clone) and logs what the loader asks of it, with copies that
    finish only when the test says so."""

    copies = True

    def __init__(self):
        self.log = []
        self.done = set()

    def start(self, host, cache=None):
        tensors = [t.clone() for t in strata_device.host_tensors(host)]
        flight = strata_device.InFlight(strata_device.assemble(tensors, host, cache), host)
        self.log.append(("start", host.index))
        return flight

    def hand_over(self, flight):
        self.log.append(("hand_over", flight.batch.index))

    def finished(self, flight):
        return flight.batch.index in self.done

    def copy_seconds(self, flight):
        return 0.5


@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_copies_run_prefetch_batches_ahead_and_host_buffers_live_until_they_finish(
        small, monkeypatch, prefetch):
    transfer = RecordingTransfer()
    monkeypatch.setattr(strata_device, "transfer_for", lambda device: transfer)
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   device="cpu", prefetch=prefetch)
    count = len(loader)
    epoch = iter(loader)
    for i in range(count):
        batch = next(epoch)
        assert batch.index == i
        # Before batch i is handed over, the copies of batches up to i + prefetch are issued.
        handed = transfer.log.index(("hand_over", i))
        started = [b for op, b in transfer.log[:handed] if op == "start"]
        assert started == list(range(min(i + prefetch, count - 1) + 1))
        # Unfinished copies keep their host batches: nothing retires.
        assert len(epoch._retiring) == i + 1
    transfer.done = set(range(count // 2))
    with pytest.raises(StopIteration):
        next(epoch)
    # The end of the epoch waits for every copy.
    assert not epoch._retiring
    stats = loader.stats()["device"]
    assert stats["batches"] == count
    assert stats["copy_s"] == 0.5 * count
    assert stats["bytes_copied"] == sum(
        b.features.nbytes + b.labels.nbytes + b.input_nodes.nbytes
        + sum(x.indptr.nbytes + x.indices.nbytes + x.src_nodes.nbytes for x in b.blocks)
        for b in host_batches(small))


def test_finished_copies_release_their_host_batches_as_the_epoch_goes(small, monkeypatch):
    transfer = RecordingTransfer()
    monkeypatch.setattr(strata_device, "transfer_for", lambda device: transfer)
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   device="cpu", prefetch=1)
    epoch = iter(loader)
    next(epoch)
    transfer.done = set(range(len(loader)))
    next(epoch)
    # Batch 0's copy finished: it retired when batch 1 was handed out; batch 1's waits.
    assert [f.batch.index for f in epoch._retiring] == [1]


def test_stopping_early_waits_for_issued_copies_and_releases_the_epoch(small, monkeypatch):
    transfer = RecordingTransfer()
    monkeypatch.setattr(strata_device, "transfer_for", lambda device: transfer)
    loader = strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M",
                                   device="cpu", prefetch=2)
    idle = loader.stats()["memory_used_bytes"]
    for batch in loader:
        break
    del batch
    gc.collect()
    assert loader.stats()["memory_used_bytes"] == idle
    # The next epoch starts afresh.
    assert sum(1 for _ in loader) == len(loader)


def test_multistage_loader_takes_a_device(small):
    loader = strata.MultistageLoader(small, [4, 3], 64, method="lbs", macro_batch=2, seed=3,
                                     memory_budget="64M", device="cpu", pinned_memory="8M")
    seeds = []
    for batch in loader:
        assert isinstance(batch, strata.DeviceBatch)
        seeds.extend(batch.seeds.tolist())
    assert sorted(seeds) == sorted(small.split("train").tolist())


def test_devices_that_cannot_be_used_are_one_line_input_errors(small):
    if not torch.cuda.is_available():
        with pytest.raises(strata.InputError, match="has no CUDA device") as e:
            strata.NeighborLoader(small, [4], 64, device="cuda")
        assert "\n" not in str(e.value)
    with pytest.raises(strata.InputError, match="not a torch device"):
        strata.NeighborLoader(small, [4], 64, device="gpu please")
    with pytest.raises(strata.InputError, match="prefetch"):
        strata.NeighborLoader(small, [4], 64, device="cpu", prefetch=-1)
