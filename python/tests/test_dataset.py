"""strata.Dataset, strata.generate and strata.import_npy against the files they describe."""

import pathlib

import numpy as np
import pytest

import strata
from conftest import read_csc


def test_generated_dataset_meta_splits_and_labels(small):
    assert small.num_nodes == 3000
    assert small.feature_dim == 16 and small.num_classes == 5
    assert small.meta["num_edges"] == small.num_edges
    labels = small.labels
    assert labels.dtype == np.int32 and labels.shape == (3000,)
    assert labels.min() >= 0 and labels.max() < 5
    train, val, test = (small.split(name) for name in ("train", "val", "test"))
    assert len(train) == small.meta["split_sizes"]["train"] and train.dtype == np.int64
    everything = np.concatenate([train, val, test])
    assert len(np.unique(everything)) == len(everything)  # the splits are disjoint
    indptr, indices = read_csc(small)
    assert indptr[-1] == small.num_edges and len(indices) == small.num_edges
    small.verify()


def test_import_npy_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    n, d = 50, 7
    edges = rng.integers(0, n, size=(2, 300))
    features = rng.standard_normal((n, d)).astype(np.float32)
    labels = rng.integers(0, 3, size=n)
    src = tmp_path / "npy"
    src.mkdir()
    np.save(src / "edge_index.npy", edges)
    np.save(src / "features.npy", features)
    np.save(src / "labels.npy", labels)
    np.save(src / "train_idx.npy", np.arange(0, 20))
    np.save(src / "test_idx.npy", np.arange(30, 50))
    ds = strata.import_npy(str(src), str(tmp_path / "ds"))
    assert (ds.num_nodes, ds.feature_dim, ds.num_classes) == (n, d, 3)
    np.testing.assert_array_equal(ds.labels, labels)
    np.testing.assert_array_equal(ds.split("train"), np.arange(0, 20))
    np.testing.assert_array_equal(ds.split("test"), np.arange(30, 50))
    # Every distinct (src, dst) pair is an in-edge of dst.
    indptr, indices = read_csc(ds)
    stored = {(int(s), d) for d in range(n) for s in indices[indptr[d]:indptr[d + 1]]}
    assert stored == {(int(s), int(d)) for s, d in edges.T}
    loader = strata.NeighborLoader(ds, [-1], 8, split="test", shuffle=False,
                                   feature_store="memory", memory_budget="64M")
    batch = next(iter(loader))
    np.testing.assert_array_equal(batch.features, features[batch.input_nodes])


def test_errors_are_exceptions_with_the_clis_one_line_message(tmp_path, small):
    with pytest.raises(strata.InputError, match=r"^dataset directory does not exist \(.*nope\)$"):
        strata.Dataset(str(tmp_path / "nope"))
    with pytest.raises(ValueError):  # InputError is a ValueError too
        strata.Dataset(str(tmp_path / "nope"))
    with pytest.raises(strata.InputError, match="split must be train, val or test"):
        small.split("everything")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.json").write_text("{not json")
    with pytest.raises(strata.InputError, match="meta.json"):
        strata.Dataset(str(tmp_path / "bad"))
    with pytest.raises(strata.InputError, match="already exists"):
        strata.generate(small.path, nodes=10, feature_dim=2, classes=2)
    with pytest.raises(strata.InputError):
        strata.generate(str(tmp_path / "g"), nodes=100, feature_dim=4, classes=2, graph="er")
    assert not (tmp_path / "g").exists()  # nothing written
    with pytest.raises(strata.InputError, match="memory"):
        strata.import_npy(str(tmp_path / "bad"), str(tmp_path / "x"), memory_budget="12Q")
    assert not (tmp_path / "x").exists()
    assert issubclass(strata.InputError, strata.StrataError)
