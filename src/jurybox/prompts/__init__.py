"""Prompt building: sandboxed Jinja2 templates for every judging mode, fencing of untrusted text."""

from jurybox.prompts.builders import (
    PromptParts,
    batch_pairwise_prompt,
    criterion_prompt,
    pairwise_prompt,
    ranking_prompt,
    rubric_prompt,
)
from jurybox.prompts.custom import PromptSources, TemplateFile, load_prompt_sources
from jurybox.prompts.fencing import FENCE_TAG, fence_untrusted, neutralise

__all__ = [
    "FENCE_TAG",
    "PromptParts",
    "PromptSources",
    "TemplateFile",
    "batch_pairwise_prompt",
    "criterion_prompt",
    "fence_untrusted",
    "load_prompt_sources",
    "neutralise",
    "pairwise_prompt",
    "ranking_prompt",
    "rubric_prompt",
]
