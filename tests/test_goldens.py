"""What jurybox writes, held byte for byte against goldens: the records, ``analysis_report.json``,
``summary_tables.md`` and ``report.html`` of every bundled example config (scripted judges) and of
the shared LLMBar import.

A refactor that should change nothing proves it here. A change that means to alter an output
regenerates the goldens and shows the difference in review:

    .venv/bin/python tests/test_goldens.py          # rewrite tests/data/goldens/

The LLMBar case keeps SHA-256 digests only (``digests.json``): its records and pages carry the
benchmark's texts, which stay in ../shared and are not copied into the project. To see what moved
there, write the outputs of the commit before and after and diff them.

Normalised before comparing (and nothing else): a record's ``run_id``, ``timestamp`` and
``latency_ms`` (they differ on every run), the order of the records (concurrent calls finish in
any order; the key sorts them), each judgment's latency in the report's item explorer (its
data block decoded, the latency blanked and encoded again), the folder the test ran in, and the
bytes of embedded plot images (matplotlib's output moves with its version; the plots are tested in
``tests/reporting/``). Goldens are gzip files with a
zero timestamp, so regenerating unchanged output leaves git clean.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.reporting.explorer.payload import Payload, decode_payload, encode_payload
from shared_paths import PROJECT_ROOT, SHARED_DIR, require_shared

GOLDENS = PROJECT_ROOT / "tests" / "data" / "goldens"
EXAMPLE_CONFIGS = ("pairwise", "ranking", "rubric", "criterion")
TIMING_FIELDS = ("run_id", "timestamp", "latency_ms")
REPORT_FILES = ("analysis_report.json", "summary_tables.md", "report.html")
EMBEDDED_IMAGE = re.compile(rb"data:image/(svg\+xml|png);base64,[A-Za-z0-9+/=]+")
EXPLORER_DATA = re.compile(rb'(id="jb-data" data-encoding="([a-z0-9+]+)">)(.*?)(</script>)', re.S)
LATENCY_CELL = 7  # a judgment's latency in the explorer's data (``Judgment.cells``)


def _invoke(*argv: str) -> None:
    result = CliRunner().invoke(main, list(argv), catch_exceptions=False)
    assert result.exit_code == 0, f"jurybox {' '.join(argv)}\n{result.output}"


def _normalised_records(path: Path) -> bytes:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        for field in TIMING_FIELDS:
            record.pop(field, None)
    records.sort(key=lambda record: str(record.get("key", record.get("query_id"))))
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _without_latency(match: re.Match[bytes]) -> bytes:
    """The explorer's data block with every judgment's latency blanked (timing, as above)."""
    text, encoding = match.group(3).decode("utf-8"), match.group(2).decode("ascii")
    data = decode_payload(Payload(text, encoding, len(text)))
    for item in data["items"] if data else ():
        for judgment in (cells for judge in item["v"] for cells in judge):
            judgment[LATENCY_CELL] = "(latency)"
    again = encode_payload(data)
    head = match.group(1).replace(match.group(2), again.encoding.encode("ascii"))
    return head + again.text.encode("utf-8") + match.group(4)


def _outputs(workdir: Path, run_dir: Path, record_files: tuple[str, ...]) -> dict[str, bytes]:
    outputs = {name: _normalised_records(run_dir / name) for name in record_files}
    for name in REPORT_FILES:
        data = (run_dir / "report" / name).read_bytes()
        data = data.replace(str(workdir).encode("utf-8"), b"(workdir)")
        data = EXPLORER_DATA.sub(_without_latency, data)
        outputs[name] = EMBEDDED_IMAGE.sub(rb"data:image/\1;base64,(image)", data)
    return outputs


def example_outputs(config: str, workdir: Path) -> dict[str, bytes]:
    shutil.copytree(PROJECT_ROOT / "examples", workdir / "examples")
    run_dir = workdir / "examples" / "results" / config
    _invoke("run", str(workdir / "examples" / f"{config}.yaml"))
    _invoke("analyze", str(run_dir), "--out", str(run_dir / "report"))
    return _outputs(workdir, run_dir, ("judgments.jsonl",))


def llmbar_outputs(workdir: Path) -> dict[str, bytes]:
    run_dir = workdir / "llmbar"
    source = SHARED_DIR / "data" / "llmbar"
    _invoke("import", "llmbar", str(source), "--out", str(run_dir / "judgments.jsonl"))
    _invoke("analyze", str(run_dir), "--out", str(run_dir / "report"))
    return _outputs(workdir, run_dir, ("judgments.jsonl", "judgments.items.jsonl"))


def _golden_path(case: str, name: str) -> Path:
    return GOLDENS / case / f"{name}.gz"


def _digests_path(case: str) -> Path:
    return GOLDENS / case / "digests.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _first_difference(expected: bytes, actual: bytes) -> str:
    old, new = expected.splitlines(), actual.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            at = min(len(a), len(b)) if at is None else at
            return (
                f"line {number}, byte {at}:\n"
                f"  golden: {a[max(0, at - 80) : at + 120]!r}\n"
                f"  now:    {b[max(0, at - 80) : at + 120]!r}"
            )
    return f"{len(old)} golden lines against {len(new)} now"


def _check(case: str, outputs: dict[str, bytes]) -> None:
    if _digests_path(case).exists():
        stored = json.loads(_digests_path(case).read_text(encoding="utf-8"))
        assert {name: _digest(data) for name, data in outputs.items()} == stored, case
        return
    stored_names = sorted(path.name for path in (GOLDENS / case).glob("*.gz"))
    assert stored_names == sorted(f"{name}.gz" for name in outputs), f"{case}: files differ"
    for name, actual in outputs.items():
        expected = gzip.decompress(_golden_path(case, name).read_bytes())
        if expected != actual:
            where = _first_difference(expected, actual)
            pytest.fail(f"{case}/{name} differs from its golden at {where}")


@pytest.mark.slow
@pytest.mark.parametrize("config", EXAMPLE_CONFIGS)
def test_example_outputs_match_their_goldens(
    config: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _check(config, example_outputs(config, tmp_path))


@pytest.mark.slow
@pytest.mark.shared_data
def test_llmbar_import_outputs_match_their_goldens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_shared("data/llmbar")
    monkeypatch.chdir(tmp_path)
    _check("llmbar", llmbar_outputs(tmp_path))


def _write_goldens(
    case: str, make: Callable[[Path], dict[str, bytes]], scratch: Path, *, digests_only: bool
) -> None:
    folder = GOLDENS / case
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    workdir = scratch / case
    workdir.mkdir()
    os.chdir(workdir)
    outputs = make(workdir)
    if digests_only:
        digests = {name: _digest(data) for name, data in outputs.items()}
        _digests_path(case).write_text(json.dumps(digests, indent=2) + "\n", encoding="utf-8")
    for name, data in ({} if digests_only else outputs).items():
        _golden_path(case, name).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"wrote {folder.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for config in EXAMPLE_CONFIGS:
            make = lambda work, c=config: example_outputs(c, work)  # noqa: E731
            _write_goldens(config, make, Path(scratch), digests_only=False)
        if not (SHARED_DIR / "data" / "llmbar").is_dir():
            sys.exit("../shared/data/llmbar is missing: the LLMBar goldens were not written")
        _write_goldens("llmbar", llmbar_outputs, Path(scratch), digests_only=True)
