"""Config errors point at the line of the offending key, not at text that merely contains it."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.config import load_config
from jurybox.errors import ConfigError


def _error(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value


def test_empty_judges_names_the_judges_key_and_its_line(tmp_path: Path) -> None:
    error = _error(tmp_path, "paths: {dataset: x.jsonl}\njudges: {}\n")
    assert (error.field, error.line) == ("judges", 2)


def test_key_text_inside_a_quoted_value_is_not_taken_for_the_key(tmp_path: Path) -> None:
    error = _error(
        tmp_path,
        "judges:\n  a:\n    provider: openai\n    model: m\n"
        "    base_url: 'http://x/ concurrency: 3'\n    concurrency: -1\n"
        "paths: {dataset: x.jsonl}\n",
    )
    assert (error.field, error.line) == ("judges.a.concurrency", 6)


def test_flow_style_keys_are_found(tmp_path: Path) -> None:
    error = _error(tmp_path, "judges: {a: {provider: fake}}\npaths: {dataset: 3, output_dir: o}\n")
    assert error.field == "paths.dataset"
    assert error.line == 2


def test_an_unknown_provider_points_at_its_line_and_lists_the_registered_ones(
    tmp_path: Path,
) -> None:
    error = _error(tmp_path, "paths: {dataset: x.jsonl}\njudges:\n  a:\n    provider: mistral\n")
    assert (error.field, error.line) == ("judges.a.provider", 4)
    assert "'openai_compatible'" in str(error) and "'fake'" in str(error)


def test_a_provider_need_points_at_the_judge(tmp_path: Path) -> None:
    error = _error(
        tmp_path,
        "paths: {dataset: x.jsonl}\njudges:\n  a:\n    provider: openai_compatible\n    model: m\n",
    )
    assert (error.field, error.line) == ("judges.a", 3)
    assert "needs a `base_url`" in str(error)


def test_a_config_holding_a_control_character_names_it_and_its_place(tmp_path: Path) -> None:
    """PyYAML names the character YAML forbids, and its place (the message of ed41737)."""
    config = tmp_path / "bad.yaml"
    config.write_text("judges:\n  a: {provider: fake\x07}\npaths: {dataset: x}\n", "utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value) == (
        f"{config}: invalid YAML: unacceptable character #x0007: special characters are not "
        'allowed\n  in "<unicode string>", position 28'
    )
