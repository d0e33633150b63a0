"""Strata's random streams in numpy, so that the reference can start from Strata's initial
weights and drop what Strata drops, and a difference between the two trainers shows as a
difference in the numbers, not in the draws.

Mirrors src/common/random.h (SplitMix64, MixSeed, xoshiro256**), src/nn/init.cc
(GlorotUniform), src/nn/dropout_masks.cc (FillRowMasks), src/nn/dropout.cc
(DropRowNonzeros) and the stream numbering of the full-graph path
(src/fullgraph/full_graph_runner.cc): step seed MixSeed(seed, epoch << 32), input dropout in groups of 128 rows, the dropout after layer l on stream 2 l + 2. A change to
any of those must change this file too; no test checks this file, but compare_steps.py shows a
mismatch at once (its losses part from the first epoch with dropout).
"""
import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MIX = 0xD1B54A32D192ED03
INPUT_STREAM = 0
ROW_GROUP = 128  # kFullGraphRowGroup


def _u64(x):
    return np.asarray(x, dtype=np.uint64)


def splitmix64(state):
    """(next state, output) for arrays of uint64 states."""
    state = _u64(state) + _u64(GOLDEN)
    z = state
    z = (z ^ (z >> _u64(30))) * _u64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _u64(27))) * _u64(0x94D049BB133111EB)
    return state, z ^ (z >> _u64(31))


def mix_seed(seed, index):
    """MixSeed(seed, index), element-wise over arrays."""
    with np.errstate(over="ignore"):
        state = _u64(seed) ^ (_u64(index) * _u64(MIX))
        state, _ = splitmix64(state)
        _, out = splitmix64(state)
    return out


def _rotl(x, k):
    return (x << _u64(k)) | (x >> _u64(64 - k))


class Xoshiro:
    """xoshiro256** seeded as strata::Rng, one independent stream per element of `seeds`."""

    def __init__(self, seeds):
        state = _u64(seeds).copy()
        words = []
        with np.errstate(over="ignore"):
            for _ in range(4):
                state, out = splitmix64(state)
                words.append(out)
        self.s = words

    def next(self):
        s0, s1, s2, s3 = self.s
        with np.errstate(over="ignore"):
            result = _rotl(s1 * _u64(5), 7) * _u64(9)
            t = s1 << _u64(17)
            s2 = s2 ^ s0
            s3 = s3 ^ s1
            s1 = s1 ^ s2
            s0 = s0 ^ s3
            s2 = s2 ^ t
            s3 = _rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result

    def draws16(self, count):
        """The next `count` 16-bit draws of every stream, low bits first: shape (streams, count)."""
        words = np.stack([self.next() for _ in range((count + 3) // 4)], axis=-1)
        parts = [(words >> _u64(16 * k)) & _u64(0xFFFF) for k in range(4)]
        return np.stack(parts, axis=-1).reshape(*words.shape[:-1], -1)[..., :count]


def glorot_uniform(rows, cols, seed, gain=1.0):
    """GlorotUniform(values rows x cols, fan_in = rows, fan_out = cols, seed, gain), row-major."""
    limit = gain * np.sqrt(6.0 / (rows + cols))
    rng = Xoshiro(np.array([seed], dtype=np.uint64))
    words = np.concatenate([rng.next() for _ in range(rows * cols)])
    uniform = (words >> _u64(11)).astype(np.float64) * 2.0 ** -53
    return ((2.0 * uniform - 1.0) * limit).reshape(rows, cols)


def drop_threshold(p):
    return int(round(p * 65536.0))


def step_seed(seed, epoch):
    """The full-graph path's seed of the step of `epoch` (batch index 0)."""
    return mix_seed(seed, epoch << 32)


def row_mask(seed, first_row, rows, cols, p):
    """FillRowMask for rows [first_row, first_row + rows): 1 / (1 - p) where kept, else 0."""
    streams = mix_seed(seed, np.arange(first_row, first_row + rows, dtype=np.uint64))
    draws = Xoshiro(streams).draws16(cols)
    return np.where(draws >= drop_threshold(p), 1.0 / (1.0 - p), 0.0)


def input_nonzero_mask(x, p, step):
    """The full-graph path's input dropout of dense features x (N x D, float): every row's
    non-zeros, in column order, each kept on a 16-bit draw of the row's stream within its
    group of 128 rows. Returns the multiplier of each entry (1 / (1 - p) or 0)."""
    n, d = x.shape
    base = mix_seed(step, INPUT_STREAM)
    rows = np.arange(n, dtype=np.uint64)
    streams = mix_seed(mix_seed(base, rows // _u64(ROW_GROUP)), rows % _u64(ROW_GROUP))
    nonzero = x != 0
    most = int(nonzero.sum(axis=1).max()) if n else 0
    draws = Xoshiro(streams).draws16(max(most, 1))
    order = np.cumsum(nonzero, axis=1) - 1  # which draw each non-zero uses
    picked = np.take_along_axis(draws, np.clip(order, 0, None), axis=1)
    kept = nonzero & (picked >= drop_threshold(p))
    return np.where(kept, 1.0 / (1.0 - p), 0.0)
