"""The one way ``jurybox.stats`` turns an ``rng`` argument into a Generator (no global state)."""

from __future__ import annotations

import numpy as np

RNGLike = np.random.Generator | int | None


def as_generator(rng: RNGLike) -> np.random.Generator:
    """A numpy Generator from a Generator, an integer seed or None (fresh OS entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    kind = type(rng).__name__
    raise ValueError(f"rng must be a numpy Generator, an int seed or None, got {kind}")
