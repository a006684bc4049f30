"""The item explorer past ``PAGED_OVER`` items: every item's full row in numbered side files.

report.html then embeds only an index (each item's id, the start of its question, its label,
flags, the judges' verdicts and its failure count: what the table, its filters, search and
sorting read), and the rows themselves, texts and reasoning included, go into
``report_items/page-0001.js``, ... beside it, ``PAGE_ITEMS`` items each in index order. Each file
is one call, ``jbItemsPage(<page>, "<gzip+base64 JSON>")``, of a function the page's script
registers: a ``<script src>`` loads on ``file://`` where ``fetch()`` may not, and the page's
script adds it only when an item on that page is opened.

Nothing is built whole: the records are read a slice at a time, each judgment spooled to a
temporary file of its page's bucket, then the pages are written bucket by bucket. The folder is
written under a temporary name and swapped in complete (``swap_folder``).
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from jurybox.io.atomic import swap_folder
from jurybox.records import Item
from jurybox.redaction import redact_known
from jurybox.reporting.explorer.data import FLAG_BITS, TEXT_CHARS, ItemMarks, ShownBlock, cut_text
from jurybox.reporting.explorer.links import FILTERS
from jurybox.reporting.explorer.payload import Payload, decode_payload, json_payload

if TYPE_CHECKING:
    import pandas as pd

PAGED_OVER = 10_000  # items: up to this many, every row is embedded in report.html (as before)
PAGE_ITEMS = 1_000  # items per side file
PAGES_DIR = "report_items"
QUESTION_CHARS = 160  # of each question in the index (as many as the table shows)
BUCKETS = 128  # spool files at most: pages are grouped so that few files are open at once
PAGE_LEVEL = 6  # gzip level of a page: nearly level 9's size, several times faster
INDEX_LEVEL = 6  # and of the index (larger than any embedded explorer: seconds less than 9)


def page_file(page: int) -> str:
    """The side file of 1-based page ``page``, relative to report.html."""
    return f"{PAGES_DIR}/page-{page:04d}.js"


def explorer_size(records: pd.DataFrame, items: Sequence[Item] | None) -> int:
    """How many rows the explorer has: the dataset's items and every item judged (``records``:
    the frame's records table, or the tables' it is made of; its ``query_id`` column)."""
    ids = {str(item.id) for item in items or ()}
    # the distinct ids first (150,000 of a million records' ids), then their texts
    ids.update(map(str, records["query_id"].unique()))
    return len(ids)


@dataclass(frozen=True)
class PagedExplorer:
    """The index report.html embeds (as its data block: ``payload``) and what was written
    beside it. The index is kept as that text, not as objects: a million records' index is
    150,000 rows, a few MB of text and hundreds of MB of dicts."""

    judges: tuple[str, ...]
    label_kind: str
    payload: Payload
    n_items: int
    n_pages: int
    page_items: int

    def to_json(self) -> dict[str, Any]:
        """The page's data block (as ``ExplorerData.to_json``, with index rows)."""
        data: dict[str, Any] = decode_payload(self.payload)
        return data


@dataclass
class _Spool:
    """Temporary files of judgments, one per bucket of pages, appended in record order. At
    most ``BUCKETS`` are open at once (more buckets than that, where the explorer has more
    items than its size said, reopen theirs to append)."""

    folder: Path
    pages_per_bucket: int
    files: dict[int, IO[str]] = field(default_factory=dict)  # open, least recent first
    written: set[int] = field(default_factory=set)

    def write(self, page: int, line: str) -> None:
        bucket = page // self.pages_per_bucket
        handle = self.files.pop(bucket, None)
        if handle is None:
            if len(self.files) >= BUCKETS:
                self.files.pop(next(iter(self.files))).close()
            mode = "a" if bucket in self.written else "w"
            handle = self._path(bucket).open(mode, encoding="utf-8")
            self.written.add(bucket)
        self.files[bucket] = handle
        handle.write(line)

    def _path(self, bucket: int) -> Path:
        return self.folder / f"bucket-{bucket}.jsonl"

    def read(self, bucket: int) -> list[str]:
        handle = self.files.pop(bucket, None)
        if handle is not None:
            handle.close()
        if bucket not in self.written:
            return []
        self.written.discard(bucket)
        path = self._path(bucket)
        with path.open(encoding="utf-8") as lines:
            found = lines.readlines()
        path.unlink()
        return found

    def close(self) -> None:
        for handle in self.files.values():
            handle.close()
        self.files.clear()


class PageWriter:
    """Streams the records into the explorer's side files; ``finish`` writes the pages."""

    def __init__(
        self,
        items: Sequence[Item] | None,
        out_dir: Path,
        *,
        size: int,
        marks: ItemMarks,
        judges: tuple[str, ...],
    ) -> None:
        """``size``: ``explorer_size``; ``marks`` (``item_marks``) and ``judges``: the
        frame's."""
        self.judges = judges
        # Each judge met, numbered in the order met; mapped to the frame's columns at ``finish``.
        self._judge_index: dict[str, int] = {}
        self._marks = marks
        self._ids: list[str] = []
        self._items: list[Item | None] = []
        self._position: dict[str, int] = {}
        for item in items or ():
            self._place(str(item.id), item)
        pages = -(-max(size, 1) // PAGE_ITEMS)
        self.out_dir = out_dir
        self._work = Path(tempfile.mkdtemp(prefix=f".{PAGES_DIR}.", suffix=".tmp", dir=out_dir))
        spool_dir = self._work / "spool"
        spool_dir.mkdir()
        self._spool = _Spool(spool_dir, max(1, -(-pages // BUCKETS)))

    def _place(self, qid: str, item: Item | None) -> int:
        """The item's position in index order: first seen, first (the dataset's order, then
        the records'); a later dataset item with the same id replaces the text only."""
        position = self._position.get(qid)
        if position is None:
            position = self._position[qid] = len(self._ids)
            self._ids.append(qid)
            self._items.append(item)
        elif item is not None:
            self._items[position] = item
        return position

    def add(self, block: ShownBlock) -> None:
        """Spool each record of the block to its item's page, in order (one spool write per
        bucket). Records of judges not in the frame are not shown, as in the embedded
        explorer."""
        known, place, judge_number = self._position.get, self._place, self._judge_number
        text, per_bucket = encode_basestring, self._spool.pages_per_bucket * PAGE_ITEMS
        by_bucket: dict[int, list[str]] = defaultdict(list)
        rows = zip(
            block.query_ids, block.judges, block.orders, block.verdicts, block.confidences,
            block.reasonings, block.statuses, strict=True,
        )  # fmt: skip
        for query_id, judge, order, verdict, confidence, reasoning, status in rows:
            position = known(query_id)
            if position is None:
                position = place(query_id, None)
            j = judge_number(judge)
            # The judgment as the page's JSON holds it, encoded once here and copied into the
            # page as text; the verdict and the failure again for the index. JSON text has no
            # tab.
            shown = text(verdict)
            cells = f"[{text(order)},{shown},{text(confidence)},{text(reasoning)},{text(status)}]"
            line = f"{position}\t{j}\t{int(status != 'ok')}\t{shown}\t{cells}\n"
            by_bucket[position // per_bucket].append(line)
        for bucket, lines in by_bucket.items():
            self._spool.write(bucket * self._spool.pages_per_bucket, "".join(lines))

    def _judge_number(self, judge: str) -> int:
        """The judge's number in the spooled lines (a judge met first: the next one)."""
        return self._judge_index.setdefault(judge, len(self._judge_index))

    def finish(self) -> PagedExplorer:
        """Write every page (into the temporary folder) and return the index."""
        marks = self._marks
        # The spooled judges' columns; records of judges not in the frame are not shown, as
        # in the embedded explorer.
        column = {judge: j for j, judge in enumerate(self.judges)}
        columns = [column.get(judge, -1) for judge in self._judge_index]
        pages = max(1, -(-len(self._ids) // PAGE_ITEMS))
        pages_dir = self._work / PAGES_DIR
        pages_dir.mkdir()
        index_rows: list[str] = []
        per_bucket = self._spool.pages_per_bucket
        # Each page is gzipped and written in a worker thread (zlib lets go of the GIL) while
        # the next one is built: one page in flight; its error is raised here, at the next.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-pages") as pool:
            written: Future[None] | None = None
            for bucket in range(-(-pages // per_bucket)):
                first = bucket * per_bucket * PAGE_ITEMS
                size = min(per_bucket * PAGE_ITEMS, len(self._ids) - first)
                spooled = _Bucket(self._spool.read(bucket), first, size, columns, len(column))
                for page in range(bucket * per_bucket, min((bucket + 1) * per_bucket, pages)):
                    rows = self._page_rows(page, spooled, marks)
                    index_rows.extend(index for index, _ in rows)
                    texts = [text for _, text in rows]
                    if written is not None:
                        written.result()
                    path = pages_dir / Path(page_file(page + 1)).name
                    written = pool.submit(_write_page, path, page + 1, texts)
            if written is not None:
                written.result()
        self._spool.close()
        head = {
            "judges": list(self.judges),
            "filters": list(FILTERS),
            "bits": dict(FLAG_BITS),
            "label": marks.label_kind,
            "paged": {"dir": PAGES_DIR, "size": PAGE_ITEMS, "pages": pages},
        }
        # The JSON of head + "items": index_rows, as json.dumps writes it (a list's items
        # joined by ","), without a dict per row.
        text = _encode(head)[:-1] + ',"items":[' + ",".join(index_rows) + "]}"
        return PagedExplorer(
            self.judges,
            marks.label_kind,
            json_payload(text, compresslevel=INDEX_LEVEL),
            len(index_rows),
            pages,
            PAGE_ITEMS,
        )

    def _page_rows(self, page: int, spooled: _Bucket, marks: ItemMarks) -> list[tuple[str, str]]:
        """Each item of the page: its index row and its full row as JSON texts (the keys and
        values of ``ExplorerData.to_json``'s rows, its judgments in record order), written
        as ``json.dumps`` writes them (``_encode``), without a dict per row."""
        first = page * PAGE_ITEMS
        last = min(first + PAGE_ITEMS, len(self._ids))
        judges, text = self.judges, _encode_text
        rows = []
        for position in range(first, last):
            qid, item = self._ids[position], self._items[position]
            question = cut_text(item.question, TEXT_CHARS) if item is not None else ""
            responses = item.responses.items() if item is not None else ()
            flags = marks.flags.get(qid, {})
            # id, label, disagreement and flags: the part the index and the row share
            marked = (
                f',"g":{text(marks.gold.get(qid))},"d":{int(qid in marks.disagree)}'
                f',"f":[{",".join(str(flags.get(judge, 0)) for judge in judges)}]'
            )
            short = question[:QUESTION_CHARS] + "…" if len(question) > QUESTION_CHARS else question
            shown = ",".join(text(verdicts) for verdicts in spooled.shown(position))
            index = (
                f'{{"id":{text(qid)},"q":{text(short)}{marked},"s":[{shown}]'
                f',"n":{spooled.failed_at(position)}}}'
            )
            answers = ",".join(
                f"[{text(arm)},{text(cut_text(response, TEXT_CHARS))}]"
                for arm, response in responses
            )
            full = (
                f'{{"id":{text(qid)},"q":{text(question)},"r":[{answers}]{marked}'
                f',"v":[{spooled.judged(position)}]}}'
            )
            rows.append((index, full))
        return rows

    @property
    def work(self) -> Path:
        """The temporary folder beside report.html that ``finish`` writes the pages into."""
        return self._work

    def install(self) -> Path:
        """Swap the written folder in as ``report_items`` beside report.html."""
        return install_pages(self._work, self.out_dir)

    def discard(self) -> None:
        """Remove the temporary folder (on an error: nothing half-written is left)."""
        self._spool.close()
        discard_work(self._work)


def install_pages(work: Path, out_dir: Path) -> Path:
    """Swap the pages written in ``work`` (``PageWriter.work``) in as ``report_items``."""
    target = out_dir / PAGES_DIR
    swap_folder(work / PAGES_DIR, target)
    discard_work(work)
    return target


def discard_work(work: Path) -> None:
    """Remove a ``PageWriter.work`` folder and what it holds."""
    shutil.rmtree(work, ignore_errors=True)


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _encode_text(value: Any) -> str:
    """``_encode(value)``, for a text without setting an encoder up per call."""
    return encode_basestring(value) if type(value) is str else _encode(value)


# A judgment's verdict spooled as JSON, read back: few distinct ones, each decoded once.
_decoded = functools.lru_cache(maxsize=1 << 14)(json.loads)


class _Bucket:
    """A bucket's spooled judgments, by item and judge: their JSON texts and verdicts, in
    record order, and each item's number of failed ones."""

    def __init__(
        self, lines: list[str], first: int, size: int, columns: list[int], n_judges: int
    ) -> None:
        """``columns``: the column of each judge number spooled (-1: not shown)."""
        self.first, self.n_judges = first, n_judges
        self.cells: list[list[str]] = [[] for _ in range(size * n_judges)]
        self.verdicts: list[list[str]] = [[] for _ in range(size * n_judges)]
        self.failed = [0] * size
        for line in lines:
            at, j, failed, verdict, cells = line[:-1].split("\t", 4)
            column = columns[int(j)]
            if column < 0:
                continue
            item = int(at) - first
            at_judge = item * n_judges + column
            self.cells[at_judge].append(cells)
            self.verdicts[at_judge].append(verdict)
            if failed != "0":
                self.failed[item] += 1

    def _judges(self, position: int) -> range:
        start = (position - self.first) * self.n_judges
        return range(start, start + self.n_judges)

    def judged(self, position: int) -> str:
        """The item's judgments as its row's JSON holds them: per judge, a list of each."""
        return ",".join("[" + ",".join(self.cells[k]) + "]" for k in self._judges(position))

    def shown(self, position: int) -> list[str]:
        """Per judge, its verdicts of the item joined as the table shows them."""
        return [" / ".join(map(_decoded, self.verdicts[k])) for k in self._judges(position)]

    def failed_at(self, position: int) -> int:
        return self.failed[position - self.first]


def _write_page(path: Path, page: int, rows: list[str]) -> None:
    text = redact_known("[" + ",".join(rows) + "]")  # compressed: no later pass can see in
    packed = gzip.compress(text.encode("utf-8"), compresslevel=PAGE_LEVEL, mtime=0)
    body = base64.b64encode(packed).decode("ascii")
    path.write_text(f'jbItemsPage({page},"{body}");\n', encoding="ascii")


def remove_pages(out_dir: Path) -> None:
    """Remove a ``report_items`` folder left by an earlier, larger report."""
    shutil.rmtree(out_dir / PAGES_DIR, ignore_errors=True)
