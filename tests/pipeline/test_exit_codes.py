"""`jurybox run` exit statuses: an unset key is refused before any call (2; a dry run needs no
key); a judge whose every call failed ends the run with 1 and one line per such judge; failures
are summed by kind."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from jurybox.app import run_from_config
from jurybox.app.run import check_api_keys, key_env_of
from jurybox.cli import main
from jurybox.config import JudgeConfig, config_from_mapping
from jurybox.errors import ConfigError
from jurybox.io.judgments import read_records
from jurybox.pipeline.summary import FailureTally, failure_kind
from jurybox.records import Status

from .helpers import config_dict, fake_judge, record, write_config, write_dataset

KEY_VAR = "JURYBOX_EXIT_TEST_KEY"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "d.jsonl", 6)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["run", *args])


def openai_judge(**extra: Any) -> dict[str, Any]:
    # A real vendor adapter; the dead port means any call would fail, never reach a network.
    return {"provider": "openai", "model": "gpt-x", "base_url": "http://127.0.0.1:9/v1", **extra}


def no_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building any provider a test failure: the check must come first."""
    from jurybox.providers import registry

    def refuse(name: str, judge: Any) -> Any:
        raise AssertionError(f"provider for {name} built although its key is missing")

    for provider in ("fake", "openai"):
        monkeypatch.setitem(registry._REGISTERED, provider, refuse)


def test_unset_key_of_a_vendor_adapter_exits_2_before_any_call(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    no_providers(monkeypatch)
    judges = {"gpt": openai_judge(api_key_env=KEY_VAR), "free": fake_judge()}
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out", judges=judges)
    result = invoke(str(path))
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert KEY_VAR in lines[0] and "judge 'gpt'" in lines[0] and "'free'" not in lines[0]
    assert str(path) in lines[0] and "no call was made" in lines[0]
    assert not (tmp_path / "out").exists()


def test_vendor_default_variable_is_checked_when_api_key_env_is_left_out(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    no_providers(monkeypatch)
    judge = {"provider": "openai", "model": "gpt-x"}  # public endpoint, the SDK's usual variable
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out", judges={"gpt": judge})
    result = invoke(str(path))
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output
    assert "judge 'gpt'" in result.output


def test_key_env_follows_the_adapters_rules() -> None:
    assert key_env_of(JudgeConfig(provider="openai", model="m")) == "OPENAI_API_KEY"
    assert key_env_of(JudgeConfig(provider="anthropic", model="m")) == "ANTHROPIC_API_KEY"
    assert key_env_of(JudgeConfig(provider="google", model="m")) == "GEMINI_API_KEY"
    explicit_null = JudgeConfig(provider="openai", model="m", api_key_env=None)
    assert key_env_of(explicit_null) is None  # `api_key_env: null`: no key at all
    own_server = JudgeConfig(provider="openai", model="m", base_url="http://127.0.0.1:1/v1")
    assert key_env_of(own_server) is None
    assert key_env_of(JudgeConfig(provider="fake", api_key_env="X_KEY")) == "X_KEY"
    assert key_env_of(JudgeConfig(provider="fake")) is None


def test_check_api_keys_names_every_missing_judge(tmp_path: Path, dataset: Path) -> None:
    judges = {"a": openai_judge(api_key_env="KEY_A"), "b": openai_judge(api_key_env="KEY_B")}
    config = config_from_mapping(config_dict(dataset, tmp_path / "out", judges=judges))
    with pytest.raises(ConfigError) as caught:
        check_api_keys(config, ["a", "b", "a"], env={"KEY_B": ""})  # empty counts as unset
    message = str(caught.value)
    assert "judge 'a'" in message and "KEY_A" in message and "judge 'b'" in message
    check_api_keys(config, ["a", "b"], env={"KEY_A": "x", "KEY_B": "y"})  # no error
    check_api_keys(config, ["b"], env={"KEY_B": "y"})  # a judge with no work is not checked


def test_the_dry_run_reads_no_key(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    no_providers(monkeypatch)
    judges = {"gpt": openai_judge(api_key_env=KEY_VAR)}
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out", judges=judges)
    result = invoke(str(path), "--dry-run")
    assert result.exit_code == 0, (result.output, result.exception)
    assert "work units in all" in result.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("others", [{"fine": fake_judge()}, {}])
def test_a_judge_whose_every_call_failed_exits_1_with_its_reason(
    tmp_path: Path, dataset: Path, others: dict[str, Any]
) -> None:
    judges = {"broken": fake_judge(error_rate=1.0), **others}
    path = write_config(
        tmp_path / "cfg.yaml",
        dataset,
        tmp_path / "out",
        judges=judges,
        pipeline={"max_retries": 0, "test_retest_count": 0},
    )
    result = invoke(str(path))
    assert result.exit_code == 1, (result.output, result.exception)
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert "judge 'broken': 12 of 12 calls failed (connection reset 12)" in errors[0]
    assert "simulated transient failure" in errors[0]
    total = 12 * len(judges)
    assert f"failures: 12 of {total} records (connection reset 12)" in result.output
    records = list(read_records(tmp_path / "out" / "judgments.jsonl"))
    assert len(records) == total  # the run still wrote every record before exiting 1
    # the next step, even when every call of the run failed: redo them, not analyse
    text = " ".join(result.output.split())
    assert "Next: 12 provider_error records are redone by:" in text
    assert f"jurybox run {path} --resume {tmp_path / 'out'}" in text
    assert "jurybox analyze" not in text


def test_a_clean_run_exits_0_and_says_no_failures(tmp_path: Path, dataset: Path) -> None:
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out")
    result = invoke(str(path))
    assert result.exit_code == 0, (result.output, result.exception)
    assert "failures: none" in result.output
    assert "Next: jurybox analyze" in result.output  # nothing to redo: the analysis is next


def test_partial_failures_exit_0_and_are_summed_in_the_summary(
    tmp_path: Path, dataset: Path
) -> None:
    path = write_config(
        tmp_path / "cfg.yaml",
        dataset,
        tmp_path / "out",
        judges={"flaky": fake_judge(error_rate=0.5, seed=3)},
        pipeline={"max_retries": 0},
    )
    buffer = io.StringIO()
    summary = run_from_config(path, console=Console(file=buffer, width=300))
    failed = summary.status_counts["provider_error"]
    assert 0 < failed < 14
    assert summary.failures_by_kind == {"connection reset": failed}
    assert summary.failed_judges == ()
    assert f"failures: {failed} of 14 records (connection reset {failed})" in buffer.getvalue()
    assert f"judge 'flaky': {failed} of 14 calls failed" in buffer.getvalue()


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (Status.OK, None, None),
        (Status.SKIPPED, None, None),
        (Status.UNPARSED, "no JSON object", "parse"),
        (Status.REFUSED, "content filter", "judge refused"),
        (Status.TRUNCATED, "truncated at max_tokens", "truncated"),
        (Status.PROVIDER_ERROR, "[HTTP 500] TransientError after 6 attempts: oops", "HTTP 500"),
        (Status.PROVIDER_ERROR, "[connection refused] ConnectError: x", "connection refused"),
        (Status.PROVIDER_ERROR, "[timeout] TransientError after 6 attempts: slow", "timeout"),
        (Status.PROVIDER_ERROR, "[auth] AuthError: OPENAI_API_KEY is not set", "auth"),
        # written before the kind prefix existed
        (Status.PROVIDER_ERROR, "AuthError (HTTP 401) after 1 attempt: bad key", "HTTP 401"),
        (Status.PROVIDER_ERROR, "RateLimitError (HTTP 429) after 21 attempts: slow", "HTTP 429"),
        (Status.PROVIDER_ERROR, "TransientError after 6 attempts: timed out", "timeout"),
        (Status.PROVIDER_ERROR, "TransientError (HTTP 500) after 6 attempts: oops", "HTTP 500"),
        (Status.PROVIDER_ERROR, None, "other"),
    ],
)
def test_failure_kind_of_each_status(status: Status, error: str | None, kind: str | None) -> None:
    assert failure_kind(record("q|j1|c|r0", status, error=error)) == kind


def test_tally_counts_per_judge_and_ignores_skipped() -> None:
    tally = FailureTally()
    auth = "[HTTP 401] AuthError after 1 attempt: bad key"
    for i in range(3):
        tally.add(record(f"q{i}|j1", Status.PROVIDER_ERROR, error=auth))
    tally.add(record("q9|j1", Status.SKIPPED))
    tally.add(replace(record("q0|j2", Status.OK), judge_name="j2"))
    tally.add(replace(record("q1|j2", Status.UNPARSED, error="no JSON"), judge_name="j2"))
    judges = tally.judges()
    assert judges["j1"].all_failed and (judges["j1"].records, judges["j1"].failed) == (3, 3)
    assert judges["j1"].reason_line() == f"judge 'j1': 3 of 3 calls failed (HTTP 401 3): {auth}"
    assert not judges["j2"].all_failed and judges["j2"].by_kind == {"parse": 1}


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("google", "GEMINI_API_KEY"),
    ],
)
def test_each_real_adapter_with_its_default_key_unset_exits_2(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch, provider: str, variable: str
) -> None:
    # No registry patch: the real adapters are what would run; the check must stop them first.
    pytest.importorskip(
        {"openai": "openai", "anthropic": "anthropic", "google": "google.genai"}[provider]
    )
    monkeypatch.delenv(variable, raising=False)
    judges = {"vendor": {"provider": provider, "model": "some-model"}}
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out", judges=judges)
    result = invoke(str(path))
    assert result.exit_code == 2, (result.output, result.exception)
    assert variable in result.output and "judge 'vendor'" in result.output
    assert not (tmp_path / "out" / "judgments.jsonl").exists()
