"""Write betting_reference.json: confseq's betting confidence sequences on fixed data.

confseq (PyPI 0.0.11) is a C++ extension that does not build in CI's time (it needs Boost and a
pybind11 newer than the one it pins for Python 3.11), so its values are computed once, here, and
kept beside this script. To recompute (Debian/Ubuntu):

    apt-get install libboost-dev
    python3.11 -m venv /tmp/csvenv
    /tmp/csvenv/bin/pip install "pybind11>=2.11" scikit-build cmake ninja setuptools wheel \
        "numpy<2" scipy
    /tmp/csvenv/bin/pip install --no-build-isolation confseq==0.0.11
    /tmp/csvenv/bin/python tests/data/confseq/make_betting_reference.py

``prpl`` is ``confseq.betting.hedged_cs`` as published (hedged capital, predictable plug-in bets
at α/2 per side, truncation ½, 1,000 grid breaks, running intersection). ``agrapa`` is
``confseq.betting.betting_cs`` with the positive and negative parts of confseq's aGRAPA bet
(``lambda_aKelly``) as the two sides of the same hedged capital process.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from confseq.betting import betting_cs, hedged_cs
from confseq.betting_strategies import lambda_aKelly


def agrapa_cs(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    return betting_cs(
        x,
        lambdas_fns_positive=[lambda y, m: np.maximum(lambda_aKelly(y, m), 0.0)],
        lambdas_fns_negative=[lambda y, m: np.maximum(-lambda_aKelly(y, m), 0.0)],
        alpha=alpha,
        breaks=1000,
        running_intersection=True,
        theta=0.5,
        trunc_scale=0.5,
        m_trunc=True,
    )


def sequences() -> dict[str, list[float]]:
    rng = np.random.default_rng(20240601)
    return {
        "bernoulli_0.8": (rng.random(240) < 0.8).astype(float).tolist(),
        "bernoulli_0.55": (rng.random(240) < 0.55).astype(float).tolist(),
        "win_rate_ties": rng.choice([0.0, 0.5, 1.0], size=160, p=[0.3, 0.2, 0.5]).tolist(),
        "beta_2_5": rng.beta(2, 5, size=120).tolist(),
    }


def main() -> None:
    cases = []
    for name, x in sequences().items():
        for bet, confidence in (("prpl", 0.95), ("agrapa", 0.95), ("agrapa", 0.9)):
            alpha = 1 - confidence
            arr = np.asarray(x)
            low, high = hedged_cs(arr, alpha=alpha) if bet == "prpl" else agrapa_cs(arr, alpha)
            cases.append(
                {
                    "data": name,
                    "bet": bet,
                    "confidence": confidence,
                    "lower": [float(v) for v in low],
                    "upper": [float(v) for v in high],
                }
            )
    out = {
        "source": f"confseq {version('confseq')} (tests/data/confseq/make_betting_reference.py)",
        "data": sequences(),
        "cases": cases,
    }
    path = Path(__file__).with_name("betting_reference.json")
    path.write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
