"""Strata from Python: out-of-core graph datasets and the mini-batch loader of `strata train`.

    import strata, torch
    ds = strata.Dataset("data/cora")
    loader = strata.NeighborLoader(ds, fanouts=[10, 10], batch_size=512, feature_store="direct",
                                   memory_budget="1G")
    for batch in loader:
        x = torch.from_numpy(batch.features)       # no copy
        y = torch.from_numpy(batch.labels)
        blocks = batch.blocks                       # input layer first

Importing strata matches the OpenBLAS kernels to the CPU (the library NumPy and PyTorch use on
Debian, whichever loaded it first); `strata.blas_core()` says which run.

Errors raise InputError (also a ValueError) for bad input and StrataError otherwise, with the
one-line message the `strata` command prints.
"""

from strata._strata import (
    Batch,
    Dataset,
    InputError,
    StrataError,
    blas_core,
    generate,
    import_npy,
)
from strata.device import DeviceBatch, HaloHistory, TensorBlock
from strata.loader import Block, MultistageLoader, NeighborLoader
from strata.pyg import PygAdj, PygBatch

__all__ = [
    "Batch",
    "Block",
    "Dataset",
    "DeviceBatch",
    "HaloHistory",
    "InputError",
    "MultistageLoader",
    "NeighborLoader",
    "PygAdj",
    "PygBatch",
    "StrataError",
    "TensorBlock",
    "blas_core",
    "generate",
    "import_npy",
]
