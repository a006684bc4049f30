"""``jurybox label``: label a run's items blind, in the order that settles the verdict soonest.

``load_run`` reads a run (its records, dataset, mode, rubric or criterion) and sorts its items
into strata from the judgments (``analysis.labelling``). A ``LabelSession`` is one annotator on
one labels file: the items in an order drawn from the annotator's name, the run and the seed
(the same order after a restart), each item's responses under neutral names in an order of
their own, and every label appended to the labels file the moment it is given
(``io.label_log``). Progress is read from that file, never kept in memory: a killed server
restarts where the annotator stopped. ``label_page.serve`` puts a session behind the page.

Streams (``docs/labelling.md``): ``uniform`` asks the items in a random order; ``targeted``
asks the contested stratum ``oversample`` times as often per item as the settled one, each in a
random order, and still draws ``uniform_share`` of the labels from the uniform stream. Each
line records its stream, stratum and the strata's sizes, from which ``analyze`` weights the
accuracy so that the targeted labels do not bias it.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from jurybox.analysis import AnalysisOptions, build_frame
from jurybox.analysis.labelling import CONTESTED, SETTLED, item_strata
from jurybox.app.label_forms import Dimension, Form, neutral_names
from jurybox.app.sources import RunTask, run_items, run_records, run_sources, run_task
from jurybox.errors import ConfigError, InputError
from jurybox.io.datasets import LabelLine, label_lines
from jurybox.io.label_log import LABELS_FILE, LabelLog
from jurybox.records import Item, JudgeRecord

Stream = Literal["uniform", "targeted"]
MAX_NOTE = 10_000  # characters; a note is a remark, not a document


@dataclass(frozen=True)
class LabelOptions:
    """One annotator's session: who, where the labels go, and in which order items come."""

    annotator: str
    labels: Path | None = None  # default: labels.jsonl in the run folder
    stream: Stream = "uniform"
    seed: int = 0
    oversample: float = 4.0  # targeted: contested items asked this many times as often
    uniform_share: float = 0.25  # targeted: this share of labels still drawn uniformly
    dataset: Path | None = None  # default: the one the run's manifest names


@dataclass(frozen=True)
class RunToLabel:
    """A run as the page needs it: items judged, their strata, the form, the records."""

    judgments: Path
    run_id: str | None  # None: records made outside a run
    mode: str
    items: tuple[Item, ...]  # judged items of the dataset, in dataset order
    strata: dict[str, str]  # query_id -> stratum
    form: Form
    records: list[JudgeRecord] = field(repr=False)

    @property
    def sizes(self) -> dict[str, int]:
        counts = Counter(self.strata.values())
        return {name: counts.get(name, 0) for name in (CONTESTED, SETTLED)}


def load_run(judgments: Path, dataset: Path | None = None) -> RunToLabel:
    """Read what labelling ``judgments`` (a run folder or judgments.jsonl) needs.

    Raises:
        InputError: no judgments, no dataset to show, or a mode the page cannot ask about.
    """
    path, records = run_records(judgments)
    items = run_items(path, run_sources(path, dataset=dataset, human=None))
    if items is None:
        raise InputError(
            "the run's dataset was not found (the page shows its questions and responses): "
            "pass --dataset",
            path=str(path),
        )
    task = run_task(path)
    mode = task.mode or Counter(r.mode for r in records).most_common(1)[0][0]
    frame = build_frame(records, human=None, items=items, options=AnalysisOptions())
    strata = {str(k): str(v) for k, v in item_strata(frame).items()}
    judged = tuple(item for item in items if item.id in strata)
    if not judged:
        raise InputError("no item of the dataset was judged in this run", path=str(path))
    return RunToLabel(
        judgments=path,
        run_id=task.run_id or records[0].run_id,
        mode=mode,
        items=judged,
        strata={item.id: strata[item.id] for item in judged},
        form=_form(mode, task),
        records=records,
    )


def _form(mode: str, task: RunTask) -> Form:
    if mode == "pairwise":
        return Form("prefer")
    if mode in ("rubric", "ranking"):
        rubric = _rubric(task)
        if mode == "ranking":
            low, high = rubric.scale
            overall = Dimension("overall", "Overall", rubric.description, (), low, high)
            return Form("scores", (overall,))
        dims = tuple(
            Dimension(d.name, d.name, d.description, tuple(d.anchors.items()), *d.scale)
            for d in rubric.dimensions
        )
        return Form("scores", dims)
    if mode == "criterion":
        return Form("verdict", criterion=_criterion(task))
    raise InputError(f"the page cannot label runs of mode '{mode}'", field="task.mode")


def _rubric(task: RunTask) -> Any:
    from jurybox.rubrics.model import load_rubric  # noqa: PLC0415  (scored modes only)

    name = task.task.get("rubric")
    if not isinstance(name, str):
        raise InputError("the run's manifest names no rubric to score on", field="task.rubric")
    for folder in task.folders:
        try:
            return load_rubric(name, base_dir=folder, env={})
        except (ConfigError, OSError):
            continue
    raise InputError(f"the run's rubric '{name}' cannot be read from here", field="task.rubric")


def _criterion(task: RunTask) -> dict[str, str]:
    from jurybox.rubrics.criteria import load_criterion  # noqa: PLC0415  (criterion runs)

    paths = task.task.get("criteria") or []
    if len(paths) != 1:
        raise InputError(
            f"the run judged {len(paths)} criteria; analyze reads one Pass/Fail per response "
            "(applied to every criterion), so label a run of one criterion",
            field="task.criteria",
        )
    for folder in task.folders:
        candidate = folder / str(paths[0])
        if candidate.is_file():
            found = load_criterion(candidate)
            return {
                "name": found.name,
                "definition": found.definition,
                "pass": found.pass_definition,
                "fail": found.fail_definition,
            }
    raise InputError(
        f"the criterion file {paths[0]} cannot be read from here", field="task.criteria"
    )


def _rng(*parts: object) -> np.random.Generator:
    digest = hashlib.sha256("\0".join(map(str, parts)).encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def item_order(run: RunToLabel, options: LabelOptions) -> list[tuple[str, Stream]]:
    """The annotator's order of the run's items, each with the stream that drew it (the same
    for the same name, run and seed)."""
    ids = [item.id for item in run.items]
    rng = _rng(run.run_id, options.annotator, options.seed, "uniform")
    uniform = [ids[i] for i in rng.permutation(len(ids))]
    if options.stream == "uniform":
        return [(qid, "uniform") for qid in uniform]
    by_stratum = {}
    for name in (CONTESTED, SETTLED):
        members = [qid for qid in ids if run.strata[qid] == name]
        rng = _rng(run.run_id, options.annotator, options.seed, name)
        by_stratum[name] = [members[i] for i in rng.permutation(len(members))]
    targeted = _interleaved(by_stratum[CONTESTED], by_stratum[SETTLED], options.oversample)
    return _mixed(uniform, targeted, options.uniform_share)


def _interleaved(contested: list[str], settled: list[str], oversample: float) -> list[str]:
    """Contested items asked ``oversample`` times as often per item as settled ones: the next
    label goes to the stratum whose labelled share, so weighted, is the smaller."""
    out: list[str] = []
    c = s = 0
    while c < len(contested) or s < len(settled):
        take_contested = s >= len(settled) or (
            c < len(contested) and c * len(settled) <= s * len(contested) * oversample
        )
        if take_contested:
            out.append(contested[c])
            c += 1
        else:
            out.append(settled[s])
            s += 1
    return out


def _mixed(uniform: list[str], targeted: list[str], share: float) -> list[tuple[str, Stream]]:
    """The targeted order with every 1/share-th label drawn by the uniform stream instead (an
    item already asked is passed over): the uniform labels stay a random sample of the run."""
    out: list[tuple[str, Stream]] = []
    taken: set[str] = set()
    streams: dict[Stream, list[str]] = {"uniform": uniform, "targeted": targeted}
    at: dict[Stream, int] = {"uniform": 0, "targeted": 0}
    drawn_uniformly = 0
    while len(out) < len(uniform):
        # Every item not yet asked lies at or after both pointers: neither list runs out.
        wanted = math.floor((len(out) + 1) * share) > drawn_uniformly
        stream: Stream = "uniform" if wanted else "targeted"
        source = streams[stream]
        while source[at[stream]] in taken:
            at[stream] += 1
        out.append((source[at[stream]], stream))
        taken.add(source[at[stream]])
        drawn_uniformly += stream == "uniform"
    return out


@dataclass(frozen=True)
class Progress:
    """The annotator's latest line per item, read from the labels file."""

    latest: dict[str, LabelLine]

    def done(self, query_id: str) -> bool:
        return query_id in self.latest


class LabelSession:
    """One annotator labelling one run into one labels file (see the module docstring)."""

    def __init__(self, run: RunToLabel, options: LabelOptions) -> None:
        if not options.annotator.strip():
            raise InputError("give the annotator's name (--annotator)", field="annotator")
        if not math.isfinite(options.oversample) or options.oversample < 1:
            raise InputError("--oversample must be a number ≥ 1", field="oversample")
        if not 0 <= options.uniform_share <= 1:
            raise InputError("--uniform-share must lie in [0, 1]", field="uniform_share")
        self.run, self.options = run, options
        self.path = options.labels or run.judgments.parent / LABELS_FILE
        if self.path.suffix.lower() != ".jsonl":
            raise InputError("the labels file must be a .jsonl file", path=str(self.path))
        drawn = item_order(run, options)
        self.order = [qid for qid, _ in drawn]
        self.streams: dict[str, Stream] = dict(drawn)
        self.items = {item.id: item for item in run.items}
        self._read: tuple[tuple[int, int], list[LabelLine]] = ((-1, -1), [])
        self.log = LabelLog(self.path)  # repairs a torn last line before anything is read
        self.given_at_start = self.lines()

    def close(self) -> None:
        self.log.close()

    def lines(self) -> list[LabelLine]:
        """Every line of the labels file as it is now (re-read only when it changed: lines are
        only ever appended, by this server or another annotator's)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        key = (stat.st_size, stat.st_mtime_ns)
        if self._read[0] != key:
            self._read = (key, list(label_lines(self.path)) if stat.st_size else [])
        return self._read[1]

    def progress(self) -> Progress:
        """This annotator's latest line per item of the run, from the file as it is now."""
        mine = (line for line in self.lines() if line.annotator == self.options.annotator)
        return Progress({line.query_id: line for line in mine if line.query_id in self.items})

    def arms(self, query_id: str) -> list[str]:
        """The item's arms in the order the page shows them to this annotator."""
        arms = list(self.items[query_id].arms)
        rng = _rng(self.run.run_id, self.options.annotator, self.options.seed, "arms", query_id)
        return [arms[i] for i in rng.permutation(len(arms))]

    def state(self) -> dict[str, Any]:
        """Where the annotator stands: how many items, labelled, skipped, and the next one."""
        progress = self.progress()
        lines = [progress.latest[qid] for qid in self.order if progress.done(qid)]
        skipped = sum(1 for line in lines if line.skipped)
        pending = [i for i, qid in enumerate(self.order, 1) if not progress.done(qid)]
        return {
            "annotator": self.options.annotator,
            "stream": self.options.stream,
            "total": len(self.order),
            "labelled": len(lines) - skipped,
            "skipped": skipped,
            "next": pending[0] if pending else None,
        }

    def item(self, position: int) -> dict[str, Any]:
        """The page's view of the item at ``position`` (1-based): blind by construction."""
        query_id = self._at(position)
        item, arms = self.items[query_id], self.arms(query_id)
        line = self.progress().latest.get(query_id)
        answer = None if line is None or line.skipped else self.run.form.answer(line.human, arms)
        return {
            "position": position,
            "total": len(self.order),
            "question": item.question,
            "responses": [
                {"name": name, "text": item.responses[arm]}
                for name, arm in zip(neutral_names(len(arms)), arms, strict=True)
            ],
            "form": self.run.form.spec(len(arms)),
            "answer": answer,
            "notes": (line.human.get("notes", "") if line is not None else "") or "",
            "skipped": bool(line is not None and line.skipped),
        }

    def _at(self, position: Any) -> str:
        if isinstance(position, bool) or not isinstance(position, int):
            raise InputError("position must be a whole number", field="position")
        if not 1 <= position <= len(self.order):
            raise InputError(f"position must be 1..{len(self.order)}", field="position")
        return self.order[position - 1]

    def give(self, position: Any, answer: Any, notes: Any = "") -> dict[str, Any]:
        """Append the annotator's label of the item at ``position``; the new state."""
        query_id = self._at(position)
        label = self.run.form.label(answer, self.arms(query_id))
        self._append(query_id, label, _note(notes))
        return self.state()

    def skip(self, position: Any) -> dict[str, Any]:
        """Record that the annotator passed over the item (it withdraws an earlier label)."""
        self._append(self._at(position), {"skipped": True}, "")
        return self.state()

    def _append(self, query_id: str, label: dict[str, Any], notes: str) -> None:
        line: dict[str, Any] = {"query_id": query_id, **label}
        line["annotator"] = self.options.annotator
        if notes:
            line["notes"] = notes
        line["design"] = {
            "stream": self.streams[query_id],
            "stratum": self.run.strata[query_id],
            "sizes": self.run.sizes,
        }
        line["labelled_at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.log.append(line)


def _note(notes: Any) -> str:
    if notes is None:
        return ""
    if not isinstance(notes, str):
        raise InputError("notes must be text", field="notes")
    if len(notes) > MAX_NOTE:
        raise InputError(f"notes are limited to {MAX_NOTE} characters", field="notes")
    return notes.strip()


def label_run(
    run: Path,
    options: LabelOptions,
    *,
    port: int = 0,
    say: Callable[[str], None],
    ready: Callable[[str], None] | None = None,
) -> LabelSession:
    """Serve ``run``'s labelling page until SIGINT/SIGTERM; ``say`` prints progress lines and
    ``ready(url)`` is called once the page can be opened (default: ``say`` it)."""
    import asyncio  # noqa: PLC0415

    from jurybox.app.label_server import Server, serve  # noqa: PLC0415  (imports this module)
    from jurybox.app.label_summary import label_summary  # noqa: PLC0415

    loaded = load_run(run, options.dataset)
    session = LabelSession(loaded, options)
    if session.log.repaired:
        say(f"{session.path}: cut a torn last line ({session.log.repaired} bytes) left by a crash")
    state = session.state()
    say(
        f"labelling {len(session.order)} items of a {loaded.mode} run as "
        f"'{options.annotator}' ({options.stream} order); labels go to {session.path}; "
        f"{state['labelled']} labelled, {state['skipped']} skipped so far"
    )
    if options.stream == "targeted" and loaded.mode != "pairwise":
        say(
            f"note: in a {loaded.mode} run the figures against humans read only the uniform "
            "share of targeted labels (docs/labelling.md); --uniform spends every label on them"
        )
    server = Server(session, summary=label_summary)
    try:
        asyncio.run(serve(server, port=port, ready=ready or (lambda url: say(f"open {url}"))))
    finally:
        session.close()
    after = session.state()
    hint = "" if options.labels is None else f" --human {session.path}"
    say(
        f"{after['labelled']} of {after['total']} items labelled by '{options.annotator}' "
        f"({after['skipped']} skipped). Next: jurybox analyze {run}{hint}"
    )
    return session
