"""A pairwise run of scripted judges of known quality over items whose better answer is known.

Every item has a short and a long response, the long one the better (the "human" truth the
tests label by). ``long_pick`` (the fake's ``longer`` behaviour) is then always right and
``first_pick`` (always the first shown, judged in both orders) right half the time. Arm, judge
and model names are words that no question or response contains, so a page that leaks them is
caught.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from rich.console import Console

from jurybox.app import run_from_config

ARMS = ("arm_alpha", "arm_omega")
JUDGES = ("first_pick", "long_pick")
MODELS = ("model-zephyrine", "model-quillbert")
SECRET_NAMES = (*ARMS, *JUDGES, *MODELS)

# (name, model, fake behaviour): first_pick always prefers the first shown, long_pick the longer.
PANEL = (("first_pick", "model-zephyrine", "first"), ("long_pick", "model-quillbert", "longer"))


def config_text(panel: tuple[tuple[str, str, str], ...] = PANEL) -> str:
    """A pairwise run config over items.jsonl, each judge a scripted fake, both orders judged."""
    judges = "".join(
        f"  {name}:\n    provider: fake\n    model: {model}\n"
        f"    fake: {{behavior: {behavior}, seed: {index}}}\n"
        for index, (name, model, behavior) in enumerate(panel)
    )
    return (
        f"judges:\n{judges}task:\n  mode: pairwise\n  arms: [{ARMS[0]}, {ARMS[1]}]\n"
        "pipeline:\n  random_seed: 7\n  position_bias_mode: both\n  test_retest_count: 0\n"
        "paths:\n  dataset: items.jsonl\n  output_dir: run\n"
    )


def write_items(path: Path, n: int, seed: int = 3) -> dict[str, str]:
    """``n`` items; returns query_id -> the arm holding the longer (better) response."""
    rng = random.Random(seed)
    better = {}
    with path.open("w", encoding="utf-8") as out:
        for index in range(1, n + 1):
            qid = f"q{index:03d}"
            short = f"Answer {index}: {rng.choice(['yes', 'no', 'maybe'])}."
            long = (
                f"Answer {index}: a fuller reply that explains the reasoning step by step, "
                f"with {index % 7 + 2} details and a worked example <b>bold?</b> & done."
            )
            arm_long = rng.choice(ARMS)
            arm_short = ARMS[1] if arm_long == ARMS[0] else ARMS[0]
            trap = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
            item = {
                "id": qid,
                "question": f"Question {index}: which reply is more helpful? {trap}",
                "responses": {arm_long: long, arm_short: short},
            }
            out.write(json.dumps(item) + "\n")
            better[qid] = arm_long
    return better


def make_run(
    folder: Path, n: int = 60, panel: tuple[tuple[str, str, str], ...] = PANEL
) -> tuple[Path, dict[str, str]]:
    """Run the scripted judges over ``n`` items in ``folder``; (run folder, truth)."""
    folder.mkdir(parents=True, exist_ok=True)
    truth = write_items(folder / "items.jsonl", n)
    (folder / "config.yaml").write_text(config_text(panel), encoding="utf-8")
    run_from_config(folder / "config.yaml", console=Console(quiet=True))
    return folder / "run", truth
