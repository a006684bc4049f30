"""The item explorer's data, links and embedding, without a browser (issue 15)."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from jurybox.analysis import build_frame
from jurybox.analysis.model import Report
from jurybox.reporting.explorer import (
    FILTERS,
    build_explorer,
    encode_payload,
    items_href,
)
from jurybox.reporting.explorer.payload import decode_payload

from .conftest import Built, swap_consistency
from .synthetic import HOSTILE, criterion_records

INLINE_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.DOTALL)


def test_items_href_encodes_every_value() -> None:
    assert items_href(judge="ChatGPT", filter="flipped") == "#items?judge=ChatGPT&filter=flipped"
    assert items_href() == "#items"
    assert items_href(judge="a&b c", q="x/y?", item="q#1") == (
        "#items?judge=a%26b%20c&q=x%2Fy%3F&item=q%231"
    )
    with pytest.raises(ValueError, match="unknown explorer filter 'nope'"):
        items_href(filter="nope")  # type: ignore[arg-type]


def test_payload_is_plain_json_when_small_and_gzipped_when_large() -> None:
    data = {"text": HOSTILE, "items": list(range(10))}
    small = encode_payload(data)
    assert small.encoding == "json" and decode_payload(small) == data
    assert "</" not in small.text and "<script" not in small.text  # cannot close the block
    large = encode_payload({"items": ["x" * 100] * 5000})
    assert large.encoding == "gzip+base64" and large.json_bytes > 200_000
    assert len(large.text) < large.json_bytes / 10
    assert decode_payload(large) == {"items": ["x" * 100] * 5000}
    assert encode_payload(data, gzip_over=10).text == encode_payload(data, gzip_over=10).text


def _counts(report: Report, judge: str) -> dict[str, int]:
    swap = swap_consistency(report, judge)
    accuracy = report.accuracy_vs_gold.judges  # type: ignore[union-attr]
    both = accuracy[judge].both_orders_correct if accuracy else None
    wrong = both.n - both.correct if both is not None and both.n is not None else -1  # type: ignore[union-attr,operator]
    return {
        "flipped": swap.n - swap.consistent,
        "wrong": wrong,
        "failed": swap.one_failed + swap.both_failed,
    }


def test_filter_counts_are_the_reports_counts(pairwise: Built) -> None:
    world = pairwise.world
    data = build_explorer(pairwise.frame, world.records, world.items)
    assert len(data.rows) == len(world.items)
    assert data.label_kind == "gold"
    for judge in data.judges:
        expected = _counts(pairwise.report, judge)
        assert expected["flipped"] > 0 and expected["wrong"] > 0
        for name, count in expected.items():
            assert data.count(name, judge) == count, (judge, name)  # type: ignore[arg-type]
    row = data.rows[0]
    assert row.question == world.items[0].question
    assert len(row.judgments) == 4  # two judges, two orders
    assert {j.order for j in row.judgments} == {"control_first", "treatment_first"}


def test_failed_and_disagree_on_the_rubric_world(rubric: Built) -> None:
    world = rubric.world
    data = build_explorer(rubric.frame, world.records, world.items)
    failed_items = {
        (r.judge_name, r.query_id)
        for r in world.records
        if r.status.value != "ok" or r.holistic_fallback
    }
    for judge in data.judges:
        own = {qid for j, qid in failed_items if j == judge}
        assert data.count("failed", judge) == len(own)
    assert data.count("failed") == len({qid for _, qid in failed_items}) > 0
    shown = {j.status for row in data.rows for j in row.judgments}
    assert "ok" in shown and shown - {"ok"}


def test_report_page_allows_only_its_own_script(pairwise: Built) -> None:
    html = pairwise.paths.html.read_text(encoding="utf-8")
    scripts = INLINE_SCRIPT.findall(html)
    assert [attrs.strip() for attrs, _ in scripts] == [
        'type="application/json" id="jb-data" data-encoding="json"',
        'id="jb-explorer"',
    ]
    code = scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    assert csp.group(1) == (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'"
    )
    assert "eval(" not in code and "innerHTML" not in code and "fetch(" not in code
    for name in FILTERS:
        assert f'data-filter="{name}"' in html


def test_counts_in_the_report_link_to_their_view(pairwise: Built) -> None:
    html = pairwise.paths.html.read_text(encoding="utf-8")
    for judge in ("judge-claude", "judge-openai"):
        counts = _counts(pairwise.report, judge)
        swap = swap_consistency(pairwise.report, judge)
        flipped = f'<a href="#items?judge={judge}&amp;filter=flipped">'
        assert f"{flipped}{counts['flipped']} of {swap.n}</a>" in html
        assert f'<a href="#items?judge={judge}&amp;filter=wrong">{counts["wrong"]} of ' in html
    markdown = pairwise.paths.markdown.read_text(encoding="utf-8")
    assert "#items" not in markdown  # links are HTML only; Markdown shows the counts


def test_criterion_verdicts_are_checked_against_the_human_label() -> None:
    records, human = criterion_records()
    frame = build_frame(records, human=human)
    data = build_explorer(frame, records)
    assert data.label_kind == "human"
    for judge in ("good", "lenient"):
        missed = {
            r.query_id
            for r in records
            if r.judge_name == judge
            and r.query_id in human
            and human[r.query_id]["verdict"][r.presentation_order] != r.verdict
        }
        assert missed and data.count("wrong", judge) == len(missed), judge
    row = next(row for row in data.rows if row.id == "q0")
    assert row.gold == "control: " + human["q0"]["verdict"]["control"] + (
        ", treatment: " + human["q0"]["verdict"]["treatment"]
    )
    assert {j.verdict for j in row.judgments} <= {
        "Pass (control)",
        "Fail (control)",
        "Pass (treatment)",
        "Fail (treatment)",
    }
    split = {
        qid
        for qid in {r.query_id for r in records}
        if len({(r.presentation_order, r.verdict) for r in records if r.query_id == qid})
        > len({r.presentation_order for r in records if r.query_id == qid})
    }
    assert data.count("disagree") == len(split) > 0
