"""Shared fixtures of the Python package's tests: datasets built once per session, and the
paths CTest passes in (STRATA_BINARY, STRATA_SOURCE_DIR)."""

import os
import pathlib

import numpy as np
import pytest

import strata

SOURCE_DIR = pathlib.Path(os.environ.get("STRATA_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def small(tmp_path_factory):
    """A generated SBM: 3000 nodes, 16-dim features, 5 classes, 20% training nodes."""
    out = tmp_path_factory.mktemp("small") / "ds"
    return strata.generate(str(out), nodes=3000, avg_degree=8, feature_dim=16, classes=5,
                           seed=3, train_ratio=0.2, memory_budget="256M")


@pytest.fixture(scope="session")
def cora(tmp_path_factory):
    """Cora as the repository carries it (datasets/cora.npz), imported."""
    source = SOURCE_DIR / "datasets" / "cora.npz"
    out = tmp_path_factory.mktemp("cora") / "cora"
    return strata.import_npy(str(source), str(out), memory_budget="256M")


def read_csc(dataset):
    """(indptr, indices) of a dataset's topology, read with numpy alone."""
    path = pathlib.Path(dataset.path)
    width = dataset.meta["node_id_bytes"]
    indptr = np.fromfile(path / "graph" / "indptr.bin", dtype=np.uint64).astype(np.int64)
    indices = np.fromfile(path / "graph" / "indices.bin",
                          dtype=np.uint32 if width == 4 else np.uint64).astype(np.int64)
    return indptr, indices


def read_features(dataset):
    """The float32 feature matrix, read with numpy alone (rows are row_stride_bytes apart)."""
    meta = dataset.meta
    assert meta["feature_dtype"] == "float32"
    stride = meta["row_stride_bytes"] // 4
    rows = meta["num_nodes"]
    raw = np.fromfile(pathlib.Path(dataset.path) / "features.bin", dtype=np.float32,
                      count=rows * stride)
    return raw.reshape(rows, stride)[:, :meta["feature_dim"]]
