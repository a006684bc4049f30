"""No proxy or URL credential reaches an output file: runs through a credential-bearing
``HTTP_PROXY`` (the loopback wire server plays the proxy and echoes the request headers,
``Proxy-Authorization`` included, in its error bodies) and a ``base_url`` with ``user:pass@``;
then every file of the run folder and of its analysis is scanned."""

from __future__ import annotations

import base64
import html
import io
import json
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import yaml
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from wire_vendors import (
    VendorServer,
    find_leaks,
    force_marker,
    judges_config,
    running_servers,
    scan_tree,
    set_vendor_env,
    write_pairwise_dataset,
)

from jurybox.app import run_from_config
from jurybox.app.analyze import analyze_to_dir
from jurybox.config import JudgeConfig
from jurybox.providers._common import scrub_secrets
from jurybox.providers.base import register_judge_secrets
from jurybox.redaction import (
    REDACTED,
    holds_known,
    redact_credentials,
    redact_known,
    register_secret,
    register_url,
)

PROXY_USER, PROXY_PASSWORD = "alice", "proxy-LEAKCHECK-pw"
URL_USER, URL_PASSWORD = "bob", "url-LEAKCHECK-pw"
# Every spelling of the credentials that would count as a leak (LEAKCHECK alone is one too).
NEEDLES = {
    "proxy password": PROXY_PASSWORD.encode(),
    "proxy basic token": base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()),
    "url password": URL_PASSWORD.encode(),
    "url basic token": base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()),
}


def _run(
    tmp_path: Path, servers: dict[str, VendorServer], vendor: str, *, url_credentials: bool
) -> Path:
    markers = {1: force_marker(401), 2: force_marker(500)}
    dataset = write_pairwise_dataset(tmp_path / "pairs.jsonl", 4, markers=markers)
    judges = {
        name: judge for name, judge in judges_config(servers).items() if judge["provider"] == vendor
    }
    if url_credentials:
        for judge in judges.values():
            judge["base_url"] = judge["base_url"].replace(
                "http://", f"http://{URL_USER}:{URL_PASSWORD}@"
            )
    config = {
        "judges": judges,
        "task": {"mode": "pairwise"},
        "pipeline": {"test_retest_count": 0, "max_retries": 0, "concurrency": 2},
        "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    screen = io.StringIO()
    summary = run_from_config(path, console=Console(file=screen, width=200))
    analyze_to_dir(
        summary.judgments_path,
        human=None,
        dataset=dataset,
        out_dir=summary.output_dir / "report",
        console=Console(file=screen, width=200),
        plots=False,
    )
    (summary.output_dir / "console.txt").write_text(screen.getvalue(), encoding="utf-8")
    return summary.output_dir


def _leaks(folder: Path) -> list[str]:
    leaks, files = scan_tree(folder)
    assert {"judgments.jsonl", "manifest.json", "console.txt"} <= {p.name for p in files}
    assert any(p.suffix == ".html" for p in files)
    for path in files:
        data = path.read_bytes()
        leaks += [f"{path.name}: {name}" for name, needle in NEEDLES.items() if needle in data]
        leaks += find_leaks(path.name, data)
    return leaks


@pytest.mark.slow
@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
@pytest.mark.parametrize("url_credentials", [False, True], ids=["proxy", "proxy+url"])
def test_no_proxy_or_url_credential_in_any_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vendor: str, url_credentials: bool
) -> None:
    set_vendor_env(monkeypatch)
    with running_servers() as servers:
        server = servers[vendor]
        monkeypatch.delenv("NO_PROXY", raising=False)
        proxy = f"http://{PROXY_USER}:{PROXY_PASSWORD}@127.0.0.1:{server.server.port}"
        monkeypatch.setenv("HTTP_PROXY", proxy)
        folder = _run(tmp_path, servers, vendor, url_credentials=url_credentials)
        proxied = [seen for seen in server.seen if "proxy-authorization" in seen.headers]

    # The requests really went through the proxy with its credentials, and were echoed back.
    assert proxied, [sorted(seen.headers) for seen in server.seen][:2]
    if not url_credentials:  # (with them, the SDK sends Basic auth: the server answers 400)
        assert any(seen.status in (401, 500) for seen in proxied)
    assert not _leaks(folder), _leaks(folder)


def test_every_credential_form_is_redacted() -> None:
    token = base64.b64encode(b"alice:secret-pw").decode()
    samples = {
        "Authorization: Bearer sk-abcdef0123456789": "sk-abcdef0123456789",
        f"Proxy-Authorization: Basic {token}": token,
        f'{{"proxy-authorization": "Basic {token}"}}': token,
        "x-api-key: ant-secret-value": "ant-secret-value",
        "x-goog-api-key=goog-secret-value": "goog-secret-value",
        "see http://alice:secret-pw@proxy.internal:3128/": "secret-pw",
        "Authorization: Token opaque-credential": "opaque-credential",
    }
    for text, secret in samples.items():
        redacted = redact_credentials(text)
        assert secret not in redacted and "[redacted]" in redacted, (text, redacted)
    assert redact_credentials("http://proxy.internal:3128/") == "http://proxy.internal:3128/"
    assert redact_credentials("a basic answer") == "a basic answer"


def test_redaction_is_idempotent_and_never_doubles_brackets() -> None:
    """A known key scrubbed by an adapter, then redacted again by the writer, read
    ``authorization=[redacted]]]`` (issue 31 item 3): the header pattern took ``[redacted`` for
    a value."""
    key = "sk-IDEMPOTENT-1234567890"
    text = f'authorization=Bearer {key} and Authorization: "Bearer {key}" x-api-key: {key}'
    once = scrub_secrets(text, [key])
    assert key not in once and "]]" not in once, once
    assert redact_credentials(once) == once
    assert redact_credentials(redact_credentials(text)) == redact_credentials(text)


def test_a_registered_login_is_redacted_in_every_form() -> None:
    user, password = "mallory", "reg-pw/with:odd@chars&more"
    register_url(f"http://{user}:{quote(password, safe='')}@proxy.internal:3128")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    forms = {
        "as is": password,
        "url-encoded": quote(password, safe=""),
        "form-encoded": quote_plus(password),
        "basic token": token,
        "decoded login": f"{user}:{password}",
        "json": json.dumps(password)[1:-1],
        "html": html.escape(password),
    }
    for name, form in forms.items():
        redacted = redact_known(f"the server said <{form}> back")
        assert form not in redacted and REDACTED in redacted, (name, redacted)
        assert holds_known(form), name
    assert redact_known("nothing secret here") == "nothing secret here"


def test_every_proxy_variable_and_judge_secret_is_registered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    passwords = {
        "HTTPS_PROXY": "upper-https-pw-1",
        "https_proxy": "lower-https-pw-2",
        "ALL_PROXY": "upper-all-pw-3",
        "all_proxy": "lower-all-pw-4",
        "HTTP_PROXY": "upper-http-pw-5",
    }
    for name, password in passwords.items():
        monkeypatch.setenv(name, f"u{len(password)}:{password}@proxy.internal:3128")  # no scheme
    monkeypatch.setenv("JURYBOX_TEST_REGISTERED_KEY", "key-registered-by-judge-6")
    judge = JudgeConfig(
        provider="openai_compatible",
        model="m",
        api_key_env="JURYBOX_TEST_REGISTERED_KEY",
        base_urls=("http://svc:url-pw-in-replica-7@127.0.0.1:1/v1", "http://127.0.0.1:2/v1"),
    )
    register_judge_secrets(judge)
    for secret in [*passwords.values(), "key-registered-by-judge-6", "url-pw-in-replica-7"]:
        assert redact_known(f"echo {secret}!") == f"echo {REDACTED}!", secret


def test_a_short_secret_is_not_registered() -> None:
    """Replacing a five-letter password everywhere would blank ordinary words out of judgments."""
    register_secret("hello")
    assert redact_known("hello world") == "hello world"
