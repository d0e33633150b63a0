"""The loaders' GPU cache tier (gpu_cache=), run here on a CPU device, where the same code
keeps the tier in host memory: batches equal those without it, only the rows it lacks are
gathered and copied, its counters add up, and its budget is enforced in one line."""

import numpy as np
import pytest
import torch

import strata
from strata import device as strata_device
from conftest import read_csc


def loader(small, **options):
    return strata.NeighborLoader(small, [4, 3], 256, seed=5, memory_budget="64M", device="cpu",
                                 row_normalize=True, **options)


@pytest.mark.parametrize("policy", ["presample", "rpr", "degree"])
def test_batches_with_the_cache_equal_those_without(small, policy):
    plain = list(loader(small))
    cached = loader(small, gpu_cache=small.num_nodes * 16, gpu_cache_policy=policy)
    # 16 dims of 4 bytes: the budget above holds a quarter of the rows.
    got = list(cached)
    assert len(got) == len(plain)
    for want, batch in zip(plain, got):
        torch.testing.assert_close(batch.features, want.features, rtol=0, atol=0)
        assert torch.equal(batch.input_nodes, want.input_nodes)
    stats = cached.stats()["device"]
    assert stats["gpu_cache_rows"] == small.num_nodes // 4
    assert stats["gpu_lookups"] == sum(len(b.input_nodes) for b in got)
    assert 0 < stats["gpu_hits"] < stats["gpu_lookups"]
    assert stats["gpu_bytes_saved"] == stats["gpu_hits"] * 16 * 4
    assert stats["gpu_hit_rate"] == pytest.approx(stats["gpu_hits"] / stats["gpu_lookups"])


def test_only_the_rows_the_cache_lacks_are_copied(small, monkeypatch):
    class CountingTransfer(strata_device.CpuTransfer):
        copies = True  # count the bytes as a GPU's transfer would

    monkeypatch.setattr(strata_device, "transfer_for", lambda device: CountingTransfer())
    everything = loader(small, gpu_cache="64M")
    for batch in everything:
        pass
    stats = everything.stats()["device"]
    assert stats["gpu_hit_rate"] == 1.0
    none = loader(small)
    for batch in none:
        pass
    # With every row on the device, only ids and blocks travel: the features' bytes are saved.
    saved = none.stats()["device"]["bytes_copied"] - stats["bytes_copied"]
    assert saved > stats["gpu_bytes_saved"] * 0.99


def test_the_degree_policy_caches_the_most_referenced_nodes(small):
    cached = loader(small, gpu_cache=100 * 16 * 4, gpu_cache_policy="degree")
    indptr, indices = read_csc(small)
    references = np.bincount(indices, minlength=small.num_nodes)
    ids = np.flatnonzero(cached._cache.slot.numpy() >= 0)
    assert len(ids) == 100
    # The cached nodes are the 100 most referenced (ties broken by smaller id).
    order = np.lexsort((np.arange(small.num_nodes), -references))
    assert set(ids) == set(order[:100])


def test_multistage_loader_takes_a_gpu_cache(small):
    kwargs = dict(method="lbs", macro_batch=2, seed=3, memory_budget="64M", device="cpu")
    plain = list(strata.MultistageLoader(small, [4, 3], 64, **kwargs))
    cached = strata.MultistageLoader(small, [4, 3], 64, gpu_cache="100K", **kwargs)
    got = list(cached)
    assert len(got) == len(plain)
    for want, batch in zip(plain, got):
        assert torch.equal(batch.features, want.features)
    assert 0 < cached.stats()["device"]["gpu_hit_rate"] < 1


def test_a_cache_beyond_its_budget_or_without_a_device_is_an_input_error(small):
    with pytest.raises(strata.InputError, match="gpu_memory_budget"):
        loader(small, gpu_cache="1M", gpu_memory_budget="64K")
    with pytest.raises(strata.InputError, match="needs a device"):
        strata.NeighborLoader(small, [4], 64, gpu_cache="1M")
    with pytest.raises(strata.InputError, match="is not a size|size"):
        loader(small, gpu_cache="lots")
