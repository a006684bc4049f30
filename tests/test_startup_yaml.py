"""Start-up (issue #19): PyYAML's non-printable pattern, seeded by ``jurybox.config``, is the one
PyYAML uses and matches exactly the characters PyYAML's own pattern matches."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from jurybox.config import NON_PRINTABLE_QUICK, YAML_NON_PRINTABLE, load_config
from jurybox.errors import ConfigError
from python_child import run_python


def test_the_quick_pattern_matches_every_code_point_as_pyyaml_s_does() -> None:
    every_code_point = "".join(map(chr, range(sys.maxunicode + 1)))
    # re.UNICODE (the default for text) gives another cache key: PyYAML's text, compiled anew.
    pyyaml = re.compile(YAML_NON_PRINTABLE, re.UNICODE)
    quick = re.compile(NON_PRINTABLE_QUICK)
    found = [match.start() for match in pyyaml.finditer(every_code_point)]
    assert [match.start() for match in quick.finditer(every_code_point)] == found
    assert len(found) == 32 - 3 + 33 - 1 + 2048 + 2  # C0 but tab/LF/CR, DEL..0x9F but NEL, ...


def test_yaml_imported_after_the_config_uses_the_seeded_pattern() -> None:
    code = (
        "import jurybox.config, yaml.reader;"
        "print(yaml.reader.Reader.NON_PRINTABLE.pattern == jurybox.config.NON_PRINTABLE_QUICK)"
    )
    assert run_python(code) == "True"


def test_a_config_holding_a_control_character_fails_as_before(tmp_path: Path) -> None:
    """PyYAML still names the character YAML forbids, and its place (the message of ed41737)."""
    config = tmp_path / "bad.yaml"
    config.write_text("judges:\n  a: {provider: fake\x07}\npaths: {dataset: x}\n", "utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value) == (
        f"{config}: invalid YAML: unacceptable character #x0007: special characters are not "
        'allowed\n  in "<unicode string>", position 28'
    )
