"""strata.NeighborLoader: its batches checked against the dataset's files read with numpy, its
arrays shared without copies, its epochs, ranks and early stops."""

import gc
import os
import signal
import subprocess
import traceback

import numpy as np
import pytest
import torch

import strata
from conftest import read_csc, read_features


def full_neighbourhood_blocks(indptr, indices, seeds, layers):
    """The blocks NeighborSampler builds with fanout -1, input layer first: each destination's
    in-neighbours in the CSC's order, new sources numbered in order of first appearance."""
    blocks = []
    dst = [int(s) for s in seeds]
    for _ in range(layers):
        local = {v: i for i, v in enumerate(dst)}
        src = list(dst)
        block_indptr, block_indices = [0], []
        for d in dst:
            for s in indices[indptr[d]:indptr[d + 1]]:
                s = int(s)
                if s not in local:
                    local[s] = len(src)
                    src.append(s)
                block_indices.append(local[s])
            block_indptr.append(len(block_indices))
        blocks.append((block_indptr, block_indices, src, len(dst)))
        dst = src
    return blocks[::-1]


def test_full_neighbourhood_batches_equal_numpys(small):
    indptr, indices = read_csc(small)
    features, labels = read_features(small), small.labels
    loader = strata.NeighborLoader(small, [-1, -1], 100, split="test", shuffle=False,
                                   feature_store="memory", memory_budget="64M")
    test = small.split("test")
    assert len(loader) == (len(test) + 99) // 100
    seen = 0
    for b, batch in enumerate(loader):
        np.testing.assert_array_equal(batch.seeds, test[b * 100:(b + 1) * 100])
        expected = full_neighbourhood_blocks(indptr, indices, batch.seeds, 2)
        for block, (e_indptr, e_indices, e_src, e_dst) in zip(batch.blocks, expected):
            assert block.num_dst == e_dst
            np.testing.assert_array_equal(block.indptr, e_indptr)
            np.testing.assert_array_equal(block.indices, e_indices)
            np.testing.assert_array_equal(block.src_nodes, e_src)
        np.testing.assert_array_equal(batch.input_nodes, batch.blocks[0].src_nodes)
        np.testing.assert_array_equal(batch.features, features[batch.input_nodes])
        np.testing.assert_array_equal(batch.labels, labels[batch.seeds])
        seen += len(batch.seeds)
    assert seen == len(test)


@pytest.mark.parametrize("store", ["direct", "mmap"])
def test_sampled_batches_follow_the_fanouts_and_read_the_files_features(small, store):
    indptr, indices = read_csc(small)
    features = read_features(small)
    fanouts = [4, 3]
    loader = strata.NeighborLoader(small, fanouts, 64, seed=5, feature_store=store,
                                   memory_budget="64M")
    seeds = []
    for batch in loader:
        seeds.extend(batch.seeds)
        for block, fanout in zip(batch.blocks, fanouts):
            for d in range(block.num_dst):
                node = block.src_nodes[d]
                picked = block.src_nodes[block.indices[block.indptr[d]:block.indptr[d + 1]]]
                neighbours = indices[indptr[node]:indptr[node + 1]]
                assert len(picked) == min(fanout, len(neighbours))
                assert np.all(np.diff(picked) > 0)  # distinct, in the CSC's order
                assert np.isin(picked, neighbours).all()
        np.testing.assert_array_equal(batch.features, features[batch.input_nodes])
    np.testing.assert_array_equal(np.sort(seeds), np.sort(small.split("train")))


def batches_of(loader, epoch):
    loader.set_epoch(epoch)
    # Each block's indices, then the edge weights of those that have them.
    return [(b.seeds.copy(),
             [blk.indices.copy() for blk in b.blocks] +
             [blk.edge_weights.copy() for blk in b.blocks if blk.edge_weights is not None],
             b.features.copy())
            for b in loader]


@pytest.mark.parametrize("sampler", [{}, {"sampler": "labor", "batch_dependency": 4},
                                     {"sampler": "labor", "labor_importance": "star"}])
def test_same_seed_same_batches_whatever_the_store_and_run_ahead(small, sampler):
    direct = strata.NeighborLoader(small, [5, 5], 50, seed=9, feature_store="direct",
                                   memory_budget="64M", **sampler)
    memory = strata.NeighborLoader(small, [5, 5], 50, seed=9, feature_store="memory",
                                   memory_budget="64M", run_ahead=1, threads=1, **sampler)
    for epoch in (0, 3):
        for (s1, i1, f1), (s2, i2, f2) in zip(batches_of(direct, epoch), batches_of(memory, epoch)):
            np.testing.assert_array_equal(s1, s2)
            assert len(i1) == len(i2)
            for a, b in zip(i1, i2):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(f1, f2)


def test_labor_blocks_carry_inverse_probability_weights(small):
    """LABOR weighs every edge by 1 / its inclusion probability (>= 1); neighbour sampling
    weighs none; LABOR-* skews the probabilities, so a destination's weights differ."""
    plain = next(iter(strata.NeighborLoader(small, [5, 5], 50, feature_store="memory",
                                            memory_budget="64M")))
    assert all(blk.edge_weights is None for blk in plain.blocks)
    for importance, skewed in ((0, False), ("star", True)):
        batch = next(iter(strata.NeighborLoader(
            small, [5, 5], 50, feature_store="memory", memory_budget="64M", sampler="labor",
            labor_importance=importance)))
        spread = 0.0
        for blk in batch.blocks:
            assert blk.edge_weights.dtype == np.float32
            assert len(blk.edge_weights) == len(blk.indices)
            assert (blk.edge_weights >= 1).all()
            for d in range(blk.num_dst):
                w = blk.edge_weights[blk.indptr[d]:blk.indptr[d + 1]]
                if len(w):
                    spread = max(spread, float(w.max() - w.min()))
        assert (spread > 0) == skewed


def test_epochs_reshuffle_and_set_epoch_repeats_one(small):
    loader = strata.NeighborLoader(small, [3], 200, seed=1, feature_store="memory",
                                   memory_budget="64M")
    first = [b.seeds.copy() for b in loader]  # epoch 0
    second = [b.seeds.copy() for b in loader]  # epoch 1
    assert not np.array_equal(first[0], second[0])
    loader.set_epoch(0)
    again = [b.seeds.copy() for b in loader]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    fixed = strata.NeighborLoader(small, [3], 200, shuffle=False, feature_store="memory",
                                  memory_budget="64M")
    np.testing.assert_array_equal(next(iter(fixed)).seeds, small.split("train")[:200])
    np.testing.assert_array_equal(next(iter(fixed)).seeds, small.split("train")[:200])


def test_arrays_are_views_of_the_batch_and_outlive_the_loader(small):
    loader = strata.NeighborLoader(small, [5, 5], 64, feature_store="direct",
                                   memory_budget="64M")
    batch = next(iter(loader))
    features = batch.features
    assert features.base is batch and batch.labels.base is batch
    assert features.ctypes.data == batch.features_address  # the loader's buffer, not a copy
    assert np.shares_memory(features, batch.features)
    tensor = torch.from_numpy(features)
    assert tensor.data_ptr() == batch.features_address
    block = batch.blocks[0]
    assert block.indptr.base is batch and block.indptr.dtype == np.int32
    expected = features.copy()
    del batch, loader
    gc.collect()
    np.testing.assert_array_equal(features, expected)  # the array keeps its batch alive
    np.testing.assert_array_equal(tensor.numpy(), expected)


def test_break_and_exceptions_stop_the_epoch_and_release_its_memory(small):
    loader = strata.NeighborLoader(small, [5, 5], 32, feature_store="direct",
                                   memory_budget="64M", run_ahead=4)
    idle = loader.stats()["memory_used_bytes"]
    for batch in loader:
        break
    del batch
    gc.collect()
    assert loader.stats()["memory_used_bytes"] == idle
    with pytest.raises(RuntimeError, match="in the training step"):
        for batch in loader:
            raise RuntimeError("in the training step")
    del batch
    gc.collect()
    assert loader.stats()["memory_used_bytes"] == idle
    assert sum(1 for _ in loader) == len(loader)  # and the next epoch runs whole
    with loader:
        next(iter(loader))
    assert loader.stats()["memory_used_bytes"] == idle


def test_ranks_split_the_seeds_as_distributed_sampler(small):
    train = small.split("train")
    world = 2
    per_rank = []
    for rank in range(world):
        loader = strata.NeighborLoader(small, [3], 64, seed=4, rank=rank, world_size=world,
                                       feature_store="memory", memory_budget="64M")
        loader.set_epoch(2)
        per_rank.append(np.concatenate([b.seeds for b in loader]))
        assert len(per_rank[-1]) == (len(train) + world - 1) // world
    whole = strata.NeighborLoader(small, [3], len(train), seed=4, feature_store="memory",
                                  memory_budget="64M")
    whole.set_epoch(2)
    order = next(iter(whole)).seeds
    for rank in range(world):
        positions = (rank + world * np.arange(len(per_rank[rank]))) % len(train)
        np.testing.assert_array_equal(per_rank[rank], order[positions])


def test_bad_loader_options_raise_input_errors(small):
    with pytest.raises(strata.InputError, match="fanout -2"):
        strata.NeighborLoader(small, [5, -2], 10)
    with pytest.raises(strata.InputError, match="rank 2 is not below world size 2"):
        strata.NeighborLoader(small, [5], 10, rank=2, world_size=2)
    with pytest.raises(strata.InputError, match="split must be"):
        strata.NeighborLoader(small, [5], 10, split="dev")
    with pytest.raises(strata.InputError):
        strata.NeighborLoader(small, [5], 10, feature_store="ssd")
    with pytest.raises(strata.InputError, match="memory"):
        strata.NeighborLoader(small, [5], 10, memory_budget="1K")
    with pytest.raises(strata.InputError, match="--sampler 'ladies'"):
        strata.NeighborLoader(small, [5], 10, sampler="ladies")


@pytest.fixture(scope="module")
def partitioned(small, tmp_path_factory):
    out = tmp_path_factory.mktemp("partitioned") / "ds"
    subprocess.run([os.environ.get("STRATA_BINARY", "build/strata"), "partition", small.path,
                    str(out), "--parts", "8", "--seed", "1"], check=True, capture_output=True)
    return strata.Dataset(str(out))


@pytest.mark.parametrize("method", ["partition", "lbs"])
def test_multistage_batches_cover_the_seeds_each_pass_with_the_files_features(partitioned,
                                                                              method):
    features = read_features(partitioned)
    labels = partitioned.labels
    loader = strata.MultistageLoader(partitioned, [4, 3], 64, method=method, macro_batch=2,
                                     reuse=2, seed=3, memory_budget="64M")
    assert loader.macro_batch == 2
    seeds, macro_batches = [], set()
    for batch in loader:
        np.testing.assert_array_equal(batch.features, features[batch.input_nodes])
        np.testing.assert_array_equal(batch.labels, labels[batch.seeds])
        seeds.extend(batch.seeds)
        macro_batches.add(batch.macro_batch)
    epoch = loader.stats()["epoch"]
    assert epoch["macro_batches"] == len(macro_batches) > 1
    assert epoch["macro_passes"] == 2 * epoch["macro_batches"]
    # Every training node is a seed once per pass over its macro-batch.
    values, counts = np.unique(seeds, return_counts=True)
    np.testing.assert_array_equal(values, np.sort(partitioned.split("train")))
    assert (counts == 2).all()


def test_multistage_same_seed_same_batches_whatever_the_run_ahead(partitioned, small):
    a = strata.MultistageLoader(partitioned, [4, 3], 64, macro_batch=2, seed=3,
                                memory_budget="64M", run_ahead=8, threads=2)
    b = strata.MultistageLoader(partitioned, [4, 3], 64, macro_batch=2, seed=3,
                                memory_budget="64M", run_ahead=1, threads=1)
    for (s1, i1, f1), (s2, i2, f2) in zip(batches_of(a, 1), batches_of(b, 1), strict=True):
        np.testing.assert_array_equal(s1, s2)
        for x, y in zip(i1, i2):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(f1, f2)
    with pytest.raises(strata.InputError, match="reuse must be between 1 and 4"):
        strata.MultistageLoader(partitioned, [4, 3], 64, reuse=5)
    with pytest.raises(strata.InputError, match="reuse 'often' is neither a number of passes nor auto"):
        strata.MultistageLoader(partitioned, [4, 3], 64, reuse="often")
    with pytest.raises(strata.InputError, match="partition"):
        strata.MultistageLoader(small, [4, 3], 64, method="partition")


def test_multistage_adaptive_reuse_takes_one_to_four_passes(partitioned):
    loader = strata.MultistageLoader(partitioned, [4, 3], 64, macro_batch=2, reuse="auto",
                                     seed=3, memory_budget="64M")
    batches = sum(1 for _ in loader)
    epoch = loader.stats()["epoch"]
    assert epoch["macro_batches"] <= epoch["macro_passes"] <= 4 * epoch["macro_batches"] - 3
    assert batches >= len(loader)
    assert epoch["batches"] == batches
    assert epoch["stall_s"] >= 0 and epoch["load_wait_s"] >= 0


def test_a_signal_while_waiting_for_a_batch_interrupts_the_wait(tmp_path):
    """Python runs signal handlers only between bytecodes; the loader's wait gives them a turn
    every 100 ms, so Ctrl-C (here a SIGALRM handler raising KeyboardInterrupt) ends a wait
    for a batch that takes far longer: four layers of full neighbourhoods in a 150K-node
    graph, the whole graph four times over (0.5 s on the 2-core machine)."""
    ds = strata.generate(str(tmp_path / "ds"), nodes=150000, avg_degree=20, feature_dim=64,
                         classes=4, seed=2, train_ratio=0.5, memory_budget="1G")
    loader = strata.NeighborLoader(ds, [-1, -1, -1, -1], 30000, shuffle=False,
                                   feature_store="memory", memory_budget="1G", run_ahead=1,
                                   threads=1)
    idle = loader.stats()["memory_used_bytes"]

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        epoch = iter(loader)
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        with pytest.raises(KeyboardInterrupt) as raised:
            next(epoch)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # Raised inside the loader's wait, not after a batch came back: the frame below the
    # handler's is the call into the compiled loader.
    frames = traceback.extract_tb(raised.tb)
    assert frames[-1].name == "interrupt"
    assert frames[-2].name == "__next__" and "self._loader.next()" in frames[-2].line
    del epoch, raised
    gc.collect()
    assert loader.stats()["memory_used_bytes"] == idle


@pytest.mark.parametrize("method", ["partition", "lbs"])
def test_multistage_ranks_take_alternate_macro_batches_and_as_many_steps(partitioned, method):
    kwargs = dict(method=method, macro_batch=2, seed=3, memory_budget="64M")
    ranks = [strata.MultistageLoader(partitioned, [4, 3], 64, rank=r, world_size=2, **kwargs)
             for r in (0, 1)]
    for epoch in (0, 1):
        macro, steps, seeds = [], [], []
        for loader in ranks:
            loader.set_epoch(epoch)
            batches = list(loader)
            steps.append(len(batches))
            macro.append({b.macro_batch for b in batches})
            seeds.append(np.concatenate([b.seeds for b in batches]))
        assert steps[0] == steps[1] > 0
        assert all(m % 2 == 0 for m in macro[0]) and all(m % 2 == 1 for m in macro[1])
        # One pass: no seed twice, across the ranks.
        both = np.concatenate(seeds)
        assert len(np.unique(both)) == len(both)


def test_pbs_batches_exchange_history_and_the_same_seed_gives_the_same_batches(partitioned):
    torch = pytest.importorskip("torch")

    def two_epochs():
        loader = strata.MultistageLoader(partitioned, [4, 3], 64, method="pbs", macro_batch=2,
                                         seed=3, memory_budget="64M", hidden=8, device="cpu")
        seen = []
        for epoch in range(2):
            loader.set_epoch(epoch)
            for batch in loader:
                history = batch.history
                assert history is not None and len(history.layers) == 1
                stale, rows, fresh = history.layers[0]
                assert rows.shape == (len(stale), 8)
                assert not set(stale.tolist()) & set(fresh.tolist())
                with pytest.raises(strata.InputError, match="fresh rows of 8"):
                    history._host.commit_history([np.zeros((len(fresh) + 1, 8), np.float32)])
                # Rows that name the step that wrote them, exact in float16.
                history.keep_fresh(0, torch.full((len(batch.blocks[1].src_nodes), 8),
                                                 float(epoch * 100 + batch.index + 1)))
                history.commit()
                seen.append((batch.input_nodes.clone(), stale.clone(), rows.clone()))
        return seen

    first, second = two_epochs(), two_epochs()
    assert len(first) == len(second)
    for (n1, s1, r1), (n2, s2, r2) in zip(first, second):
        assert torch.equal(n1, n2) and torch.equal(s1, s2) and torch.equal(r1, r2)
    # Later batches read rows earlier steps committed.
    assert any(bool((rows > 0).any()) for _, _, rows in first)
