"""Reading rate limits off responses: the three vendors' formats, from their documented samples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jurybox.providers._rate_headers import (
    parse_duration,
    quota_limits,
    rate_limits_from_headers,
)
from jurybox.records import RateLimits

NOW = datetime(2024, 8, 28, 20, 8, 0, tzinfo=UTC)

# OpenAI's documented example (platform.openai.com/docs/guides/rate-limits, "Rate limits in
# headers"): 60 requests and 150,000 tokens a minute.
OPENAI_SAMPLE = {
    "x-ratelimit-limit-requests": "60",
    "x-ratelimit-limit-tokens": "150000",
    "x-ratelimit-remaining-requests": "59",
    "x-ratelimit-remaining-tokens": "149984",
    "x-ratelimit-reset-requests": "1s",
    "x-ratelimit-reset-tokens": "6m0s",
}
# Anthropic's (docs.anthropic.com/en/api/rate-limits, "Response headers"): resets are RFC 3339.
ANTHROPIC_SAMPLE = {
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "49",
    "anthropic-ratelimit-requests-reset": "2024-08-28T20:08:57Z",
    "anthropic-ratelimit-tokens-limit": "40000",
    "anthropic-ratelimit-tokens-remaining": "39000",
    "anthropic-ratelimit-tokens-reset": "2024-08-28T20:08:01Z",
    "anthropic-ratelimit-input-tokens-limit": "30000",
    "anthropic-ratelimit-input-tokens-remaining": "30000",
    "anthropic-ratelimit-input-tokens-reset": "2024-08-28T20:08:01Z",
    "anthropic-ratelimit-output-tokens-limit": "8000",
    "retry-after": "8",
}
# A Gemini free-tier 429's error.details (ai.google.dev/gemini-api/docs/troubleshooting).
_METRIC = "generativelanguage.googleapis.com/generate_content_free_tier_"
GEMINI_DETAILS = [
    {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
            {
                "quotaMetric": _METRIC + "requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"},
                "quotaValue": "15",
            },
            {
                "quotaMetric": _METRIC + "requests",
                "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                "quotaValue": "1500",
            },
            {
                "quotaMetric": _METRIC + "input_token_count",
                "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier",
                "quotaValue": "1000000",
            },
        ],
    },
    {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"url": "https://ai.google.dev"}]},
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "43s"},
]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("59.999s", 59.999),
        ("0s", 0.0),
        ("2.5", 2.5),  # a bare number is seconds
        ("  7m12s ", 432.0),
    ],
)
def test_go_style_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1x", "1s2", "-1s", "soon", "1 s"])
def test_garbled_durations_are_none(text: str) -> None:
    assert parse_duration(text) is None


def test_openai_headers() -> None:
    limits = rate_limits_from_headers(OPENAI_SAMPLE, now=NOW)
    assert limits == RateLimits(
        requests_limit=60,
        requests_remaining=59,
        requests_reset_s=1.0,
        tokens_limit=150000,
        tokens_remaining=149984,
        tokens_reset_s=360.0,
    )


def test_anthropic_headers_use_the_combined_token_limit_and_rfc3339_resets() -> None:
    limits = rate_limits_from_headers(ANTHROPIC_SAMPLE, now=NOW)
    assert limits == RateLimits(
        requests_limit=50,
        requests_remaining=49,
        requests_reset_s=57.0,
        tokens_limit=40000,
        tokens_remaining=39000,
        tokens_reset_s=1.0,
        retry_after_s=8.0,
    )


def test_anthropic_input_token_limit_when_no_combined_one() -> None:
    only_input = {k: v for k, v in ANTHROPIC_SAMPLE.items() if "ratelimit-tokens" not in k}
    limits = rate_limits_from_headers(only_input, now=NOW)
    assert limits is not None
    assert (limits.tokens_limit, limits.tokens_remaining, limits.tokens_reset_s) == (
        30000,
        30000,
        1.0,
    )


def test_a_reset_in_the_past_is_zero_and_no_headers_is_none() -> None:
    late = datetime(2024, 8, 28, 21, 0, 0, tzinfo=UTC)
    limits = rate_limits_from_headers(ANTHROPIC_SAMPLE, now=late)
    assert limits is not None and limits.requests_reset_s == 0.0
    assert rate_limits_from_headers({"content-type": "application/json"}, now=NOW) is None
    assert rate_limits_from_headers(None) is None


def test_garbled_values_are_ignored_not_raised() -> None:
    headers = {
        "x-ratelimit-limit-requests": "lots",
        "x-ratelimit-remaining-requests": "-3",
        "x-ratelimit-reset-requests": "whenever",
        "x-ratelimit-limit-tokens": "inf",
        "anthropic-ratelimit-tokens-reset": "yesterday",
        "x-ratelimit-remaining-tokens": "1200",
    }
    assert rate_limits_from_headers(headers, now=NOW) == RateLimits(tokens_remaining=1200)


def test_gemini_quota_failure_gives_the_per_minute_limits_only() -> None:
    limits = quota_limits(GEMINI_DETAILS, retry_after_s=43.0)
    assert limits == RateLimits(requests_limit=15, tokens_limit=1_000_000, retry_after_s=43.0)


def test_gemini_body_without_quota_details_gives_only_the_delay() -> None:
    assert quota_limits([{"@type": "x.RetryInfo", "retryDelay": "2s"}], 2.0) == RateLimits(
        retry_after_s=2.0
    )
