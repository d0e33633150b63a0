"""Importing strata matches OpenBLAS's kernels to the CPU, also when NumPy loaded OpenBLAS first
(Debian's NumPy and strata share one libopenblas.so.0, so NumPy's products switch too)."""

import json
import os
import subprocess
import sys

# Run in a fresh interpreter: the kernels are chosen once per process.
SCRIPT = """
import ctypes, json
import numpy as np
maps = open("/proc/self/maps").read()
shared = "libopenblas" in maps  # NumPy's BLAS is the OpenBLAS strata links
import strata
product = np.arange(12, dtype=np.float32).reshape(3, 4)
product = (product @ product.T).tolist()
numpy_core = None
if shared:
    lib = ctypes.CDLL("libopenblas.so.0")  # the copy already loaded
    lib.openblas_get_corename.restype = ctypes.c_char_p
    numpy_core = lib.openblas_get_corename().decode()
print(json.dumps({**strata.blas_core(), "numpy_core": numpy_core, "product": product}))
"""

EXPECTED_PRODUCT = [[14.0, 38.0, 62.0], [38.0, 126.0, 214.0], [62.0, 214.0, 366.0]]


def run(**env):
    result = subprocess.run([sys.executable, "-c", SCRIPT], env={**os.environ, **env},
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


def test_a_forced_older_core_is_replaced_after_numpy_loaded_it():
    report, err = run(OPENBLAS_CORETYPE="Prescott", STRATA_BLAS_CORETYPE="auto")
    assert report["product"] == EXPECTED_PRODUCT
    if report["replaced"]:  # a CPU with more than SSE3
        assert report["replaced"] == "Prescott" and report["core"] != "Prescott"
        assert err.count("strata: note: OpenBLAS runs its Prescott kernels") == 1
        assert report["note"] in err
        if report["numpy_core"] is not None:
            assert report["numpy_core"] == report["core"]
    else:
        assert report["core"] == "Prescott" and err == ""


def test_keep_leaves_openblas_alone():
    report, err = run(OPENBLAS_CORETYPE="Prescott", STRATA_BLAS_CORETYPE="keep")
    assert report["core"] == "Prescott" and report["replaced"] == "" and report["note"] == ""
    assert report["product"] == EXPECTED_PRODUCT
    assert "strata: note" not in err
