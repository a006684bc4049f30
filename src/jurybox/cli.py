"""Command line: thin click commands over the library. Exit 0 ok, 2 bad input or set-up (a
missing extra), 1 other failure."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from jurybox.errors import InputError, JuryboxError, MissingDependencyError

if TYPE_CHECKING:
    from rich.console import Console

    from jurybox.config import RunConfig

# Start-up (issue #19): this module imports only click and the errors. rich, pydantic (the trust
# thresholds) and asyncio (the run's signals) load when a command needs them, so `--help` and
# the run's path to its first request do not pay for them.

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILURE, EXIT_BAD_INPUT = 1, 2

# The path types every command shares (start-up, issue #19: each click.Path made looks up its
# translated names through gettext, ~27 of them per start); click's types hold no state.
_FILE = click.Path(dir_okay=False, path_type=Path)
_FOLDER = click.Path(file_okay=False, path_type=Path)
_PATH = click.Path(path_type=Path)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell convention


def _console(*, stderr: bool = True) -> Console:
    from rich.console import Console

    return Console(stderr=stderr)


def handle_errors(func: F) -> F:
    """Turn jurybox errors into one-line messages and the documented exit statuses."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from jurybox.pipeline.signals import RunInterrupted  # asyncio: only once a command runs

        try:
            return func(*args, **kwargs)
        except RunInterrupted as exc:  # the use case already said what to run to resume
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:  # Ctrl-C before a run's own handler is installed
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except (InputError, MissingDependencyError) as exc:  # bad input or set-up: fix, rerun
            _say_error(str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except JuryboxError as exc:
            _say_error(str(exc))
            sys.exit(EXIT_FAILURE)
        except OSError as exc:
            _say_error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
            sys.exit(EXIT_FAILURE)

    return wrapper  # type: ignore[return-value]


def _say_error(message: str) -> None:
    """``error: message`` on stderr, credentials redacted (a message may quote a server)."""
    from jurybox.redaction import redact_credentials

    click.echo(f"error: {redact_credentials(message)}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jurybox")
def main() -> None:
    """jurybox: run panels of LLM judges over model outputs and measure how far to trust them."""
    from jurybox.redaction import redact_log_records, register_proxy_environment

    # The process is jurybox's: what it prints or logs (a vendor SDK's debug log included)
    # never shows a proxy's credentials or a registered secret.
    register_proxy_environment()
    redact_log_records()


@main.command()
@click.argument("config", type=_FILE)
@click.option(
    "--output-dir",
    type=_FOLDER,
    help="Overrides paths.output_dir.",
)
@click.option(
    "--resume",
    type=_FOLDER,
    help="Resume the run in DIR: completed judgments are skipped; the run's recorded --limit, "
    "--engine, --ray-address, --batch, --batch-fallback and --until apply unless given (see "
    "above).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print work units, tokens and the estimated cost (output at a typical length per "
    "judgment, max_tokens as the bound; docs/pricing.md); make no calls, read no key.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N items.")
@click.option(
    "--force", is_flag=True, help="With --resume: resume judgments that have no manifest.json."
)
@click.option(
    "--batch",
    is_flag=True,
    help="Send openai/anthropic/google judges as provider batches (half price, slower).",
)
@click.option(
    "--batch-fallback",
    type=click.Choice(["batch", "sync"]),
    help="Redo a batch's failed requests in a new batch (default) or synchronously.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    help="Where calls are made: this process (default), or Ray workers (the `ray` extra; "
    "docs/engines.md).",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="With --engine ray: the cluster to join (e.g. ray://head:10001); default: a local Ray.",
)
@click.option(
    "--until",
    metavar="decided|win_rate±H",
    help="Judge items in a seeded order, 20 at a time, and stop each judge once an anytime-valid "
    "95% interval answers: `decided` (pairwise, gold labels): its accuracy lies above or below "
    "trust.min_accuracy; `win_rate±0.03` (or +-): the win rate is known to ±0.03. With "
    "--dry-run: the worst case and the expected saving.",
)
@handle_errors
def run(
    config: Path,
    *,
    output_dir: Path | None,
    resume: Path | None,
    dry_run: bool,
    limit: int | None,
    force: bool,
    batch: bool,
    batch_fallback: str | None,
    engine: str | None,
    ray_address: str | None,
    until: str | None,
) -> None:
    """Judge the dataset named in CONFIG (YAML) with every configured judge.

    Exits 2 before any call on bad input, a judge's unset key variable included (not with
    --dry-run, which reads no key); exits 1 when any judge's every call failed (one line per
    such judge). Failures are counted by kind (HTTP 500, connection refused, timeout, parse
    ...); a judge whose server is not there is stopped after 3 quick attempts. After failed
    calls the run prints the --resume command that redoes them.

    \b
    --resume DIR carries the run on as it was started: its manifest records --limit, --engine,
    --ray-address, --batch, --batch-fallback and --until, and those apply when the command
    line leaves them out. Given, they change the run only where a resume may: --limit may grow
    (not shrink or be dropped: refused, naming both), the engine, Ray address and batch
    fallback may change, --batch sends the remaining work as batches (a batch run stays one),
    --until may not change. CONFIG may be another path, but what decides the judgments must
    match the manifest's.

    \b
    --until stops early: the manifest's `until` entry and the report say which judge stopped,
    after how many items, why, and with which anytime-valid interval (docs/statistics.md).
    A resume continues the same order and reaches the same stop.
    """
    from jurybox.app import run_from_config

    summary = run_from_config(
        config,
        output_dir=output_dir,
        resume=resume,
        dry_run=dry_run,
        limit=limit,
        console=None,  # rich's stderr Console, made when first used (start-up, issue #19)
        force=force,
        batch=batch,
        batch_fallback=batch_fallback,
        engine=engine,
        ray_address=ray_address,
        until=until,
    )
    if summary.failed_judges:  # a judge with no verdict at all: the run did not do its job
        for judge in summary.failed_judges:
            click.echo(f"error: {judge.reason_line()}", err=True)
        sys.exit(EXIT_FAILURE)


@main.command("batches")
@click.argument("directory", type=_FOLDER)
@click.option("--cancel", is_flag=True, help="Cancel the run's batches still in flight.")
@handle_errors
def batches_command(directory: Path, cancel: bool) -> None:
    """List the provider batches of the run in DIRECTORY (status, counts), or cancel them."""
    from jurybox.app.batches import list_batches

    list_batches(directory, cancel=cancel, console=_console(stderr=False))


@main.command()
@click.option(
    "--output-dir",
    type=_FOLDER,
    default=Path("results/demo"),
    show_default=True,
)
@handle_errors
def demo(output_dir: Path) -> None:
    """Run the bundled example end to end with the bundled local judge (no key, no network)."""
    from jurybox.app import run_demo

    run_demo(output_dir, console=_console())


@main.command()
@click.option(
    "--report",
    "of_report",
    is_flag=True,
    help="The schema of analysis_report.json (generated from the report model) instead.",
)
@click.option(
    "--records", "of_records", is_flag=True, help="The schema of one judgments.jsonl line instead."
)
def schema(of_report: bool, of_records: bool) -> None:
    """Print the JSON Schema of the YAML config (--report: of the analysis report; --records:
    of a judgments.jsonl record)."""
    if of_report:
        from jurybox.analysis.model import report_schema

        click.echo(json.dumps(report_schema(), indent=2))
        return
    if of_records:
        from jurybox.io.record_schema import record_schema

        click.echo(json.dumps(record_schema(), indent=2, ensure_ascii=False))
        return
    from jurybox.config import config_json_schema

    click.echo(json.dumps(config_json_schema(), indent=2))


@main.command()
def rubrics() -> None:
    """List the built-in rubrics."""
    from jurybox.rubrics import list_builtin_rubrics

    for name, description in list_builtin_rubrics():
        click.echo(f"{name}\t{description}")


_DATASET_HELP = (
    "The judged dataset (response texts and lengths, authors, subgroups); default: the one the "
    "run's manifest.json names."
)
_HUMAN_HELP = (
    "Human labels (JSONL/CSV/JSON) to check the judges against; default: the run config's "
    "paths.human_labels, per manifest.json."
)


@main.command("export-pairs")
@click.argument("dataset", type=_FILE)
@click.option(
    "--out",
    type=_FILE,
    required=True,
    help="JSON file to write.",
)
@click.option("--arms", nargs=2, help="Control and treatment arm names (default: the first two).")
@handle_errors
def export_pairs_command(dataset: Path, out: Path, arms: tuple[str, str] | None) -> None:
    """Write a two-arm DATASET as one JSON list of pairs for external evaluation."""
    from jurybox.io.datasets import export_pairs, load_dataset, write_pairs

    pairs = export_pairs(load_dataset(dataset), arms)
    write_pairs(pairs, out, dataset)
    click.echo(f"wrote {len(pairs)} pairs to {out}")


@main.command("export")
@click.argument("run", type=_PATH)
@click.option(
    "--out",
    type=_FILE,
    required=True,
    help="File to write (.csv, .parquet or .jsonl); an existing one is replaced only when it is "
    "an earlier export.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "parquet", "jsonl"]),
    help="Table format (default: from --out's suffix).",
)
@click.option("--dataset", type=_FILE, help=_DATASET_HELP)
@click.option("--human", type=_FILE, help=_HUMAN_HELP)
@handle_errors
def export_command(
    run: Path, out: Path, fmt: str | None, dataset: Path | None, human: Path | None
) -> None:
    """Write RUN's judgments (a run folder or judgments.jsonl) as one table: a row per judgment
    with the item's question, response texts and labels joined (docs/records.md)."""
    from jurybox.app.export import export_run

    export_run(run, out, fmt=fmt, dataset=dataset, human=human, console=_console())


# `jurybox analyze` options that override one trust threshold, each named as its key in the
# config's `trust:` section (a TrustThresholds field).
_TRUST_FLAGS = (
    "min_accuracy",
    "fail_accuracy",
    "min_kappa",
    "warn_failure_rate",
    "warn_swap_consistency",
)
# Their names before they matched the config keys: still read, not shown in --help.
_OLD_TRUST_FLAGS = {
    "--max-failure-rate": "warn_failure_rate",
    "--min-swap-consistency": "warn_swap_consistency",
}


class _TrustOption(click.Option):
    """A trust-threshold flag whose help (default and meaning) is read from ``TrustThresholds``
    when help is shown, not when the CLI loads: the model needs pydantic."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.help is None and self.name is not None:
            from jurybox.thresholds import TrustThresholds

            field = TrustThresholds.model_fields[self.name]
            self.help = (
                f"Trust threshold `{self.name}` (default {field.default}): {field.description}"
            )
        return super().get_help_record(ctx)


def _trust_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for flag, name in _OLD_TRUST_FLAGS.items():
        command = click.option(flag, f"old_{name}", type=float, hidden=True)(command)
    for name in reversed(_TRUST_FLAGS):
        flag = "--" + name.replace("_", "-")
        command = click.option(flag, name, cls=_TrustOption, type=float, default=None, metavar="X")(
            command
        )
    return command


def _trust_overrides(given: dict[str, float | None]) -> dict[str, float | None]:
    """The threshold flags by TrustThresholds field, an old flag name read as its new one."""
    overrides = {name: given.get(name) for name in _TRUST_FLAGS}
    for flag, name in _OLD_TRUST_FLAGS.items():
        value = given.get(f"old_{name}")
        if value is None:
            continue
        if overrides[name] is not None:
            new = "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} is the old name of {new}: give one of them")
        overrides[name] = value
    return overrides


def _plot_families(value: str | None) -> tuple[str, ...] | None:
    """``--plots a,b``: the named plot families, each checked against the known ones."""
    if value is None:
        return None
    from jurybox.reporting.plots import PLOT_NAMES

    names = tuple(n.strip() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in PLOT_NAMES]
    if unknown or not names:
        raise click.BadParameter(
            f"unknown plot {', '.join(unknown) or '(none given)'}; known: {', '.join(PLOT_NAMES)}",
            param_hint="--plots",
        )
    return names


def _thresholds(config: RunConfig | None, overrides: dict[str, float | None]) -> Any:
    """The config's ``trust:`` section (or the defaults), with the command line's overrides."""
    from pydantic import ValidationError

    from jurybox.thresholds import TrustThresholds

    base = config.trust if config is not None else TrustThresholds()
    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return TrustThresholds.model_validate({**base.model_dump(), **given})
    except ValidationError as exc:
        said = "; ".join(str(error["msg"]) for error in exc.errors())
        raise click.BadParameter(said, param_hint="trust thresholds") from None


@main.command()
@click.argument("judgments", type=_PATH)
@click.option("--human", type=_FILE, help=_HUMAN_HELP)
@click.option("--dataset", type=_FILE, help=_DATASET_HELP)
@click.option(
    "--out",
    "out_dir",
    type=_FOLDER,
    help="Folder for the report files (default: RUN/report for a run folder, `report` beside a "
    "judgments file): new, empty or an earlier report, which is replaced whole once the new "
    "one is complete.",
)
@click.option("--no-plots", is_flag=True, help="Write no plot image (PNG or SVG).")
@click.option(
    "--plots",
    "plot_families",
    metavar="NAMES",
    callback=lambda _ctx, _param, value: _plot_families(value),
    help="Only these plot families, comma-separated (default: all; the names are in "
    "docs/plots.md, e.g. position_bias,calibration).",
)
@click.option(
    "--config",
    "config",
    type=_FILE,
    help="Run config (YAML) whose `trust:` section sets the trust thresholds (the flags below "
    "override single ones) and whose `labels:` section, if it has one, says how to read the "
    "labels (default: as the run's config did, per manifest.json).",
)
@_trust_options
@handle_errors
def analyze(
    judgments: Path,
    *,
    human: Path | None,
    dataset: Path | None,
    out_dir: Path | None,
    no_plots: bool,
    plot_families: tuple[str, ...] | None,
    config: Path | None,
    **trust: float | None,
) -> None:
    """Analyse JUDGMENTS (judgments.jsonl, a run folder, or an export's Parquet file); write
    the report files to --out (default: RUN/report, or `report` beside a judgments file).

    The dataset and human labels default to the ones the run's manifest.json names; which were
    used is printed.

    The report answers, per judge, whether it can be trusted: `trusted` only with positive
    evidence of accuracy (agreement with gold or human labels whose 95% CI clears
    --min-accuracy / --min-kappa), at most `use with caution` without labels, lowered by
    failures, swap inconsistency, position or length preference and retest drift. The
    thresholds applied are echoed in analysis_report.json (options.thresholds). The flags are
    named as the `trust:` keys; --max-failure-rate and --min-swap-consistency, their former
    names, still work.
    """
    from jurybox.app import analyze_to_dir
    from jurybox.app.analyze import default_report_dir
    from jurybox.config import load_config

    run_config = load_config(config) if config is not None else None
    labels = run_config.labels if run_config and "labels" in run_config.model_fields_set else None
    analyze_to_dir(
        judgments,
        human=human,
        dataset=dataset,
        out_dir=out_dir if out_dir is not None else default_report_dir(judgments),
        console=_console(stderr=False),
        plots=False if no_plots else (plot_families if plot_families is not None else True),
        thresholds=_thresholds(run_config, _trust_overrides(trust)),
        labels_config=labels,
    )


@main.command("label")
@click.argument("run", type=_PATH)
@click.option(
    "--annotator",
    metavar="NAME",
    help="Whose labels these are (default: your login name); annotators on one file are kept "
    "apart by it.",
)
@click.option(
    "--labels",
    type=_FILE,
    help="The labels file (.jsonl) to append to (default: labels.jsonl in the run folder, which "
    "`analyze` then reads).",
)
@click.option("--dataset", type=_FILE, help=_DATASET_HELP)
@click.option(
    "--targeted/--uniform",
    default=False,
    help="Ask first for the items where judges disagree or flip (weighted so accuracy stays "
    "unbiased; docs/labelling.md), or in a plain random order (default).",
)
@click.option(
    "--oversample",
    type=float,
    default=4.0,
    show_default=True,
    help="With --targeted: how many times as often a contested item is asked as a settled one.",
)
@click.option(
    "--uniform-share",
    type=click.FloatRange(0, 1),
    default=0.25,
    show_default=True,
    help="With --targeted: the share of labels still asked in the uniform random order (they "
    "keep the figures that need a random sample, such as bias given the labels).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Order seed.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: any free).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser.")
@handle_errors
def label_command(
    run: Path,
    *,
    annotator: str | None,
    labels: Path | None,
    dataset: Path | None,
    targeted: bool,
    oversample: float,
    uniform_share: float,
    seed: int,
    port: int,
    open_browser: bool,
) -> None:
    """Label RUN's items blind on a local page (127.0.0.1, token in the URL): responses under
    neutral names, no judge verdict shown, every label saved the moment it is given. Ctrl-C
    stops; running it again resumes where you stopped."""
    import getpass

    from jurybox.app.label import LabelOptions, label_run

    def ready(url: str) -> None:
        click.echo(f"open {url}")
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    options = LabelOptions(
        annotator=annotator if annotator is not None else getpass.getuser(),
        labels=labels,
        stream="targeted" if targeted else "uniform",
        seed=seed,
        oversample=oversample,
        uniform_share=uniform_share,
        dataset=dataset,
    )
    label_run(run, options, port=port, say=lambda line: click.echo(line, err=True), ready=ready)


class _ImportCommand(click.Command):
    """``jurybox import``, whose help ends with every ``--map`` key of ``generic``."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from jurybox.io.verdicts.generic import MAP_KEYS  # the one list of keys, read lazily

        formatter.write_paragraph()
        formatter.write_text("--map keys of the generic kind (KEY=COLUMN, or KEY=VALUE):")
        with formatter.indentation():
            formatter.write_dl(list(MAP_KEYS.items()))


@main.command("import", cls=_ImportCommand)
@click.argument(
    "kind",
    type=click.Choice(["llmbar", "pandalm", "judgebench", "alpacaeval", "fastchat", "generic"]),
)
@click.argument("path", type=_PATH)
@click.option(
    "--out",
    type=_FILE,
    required=True,
    help="judgments.jsonl to write (and its items beside it); an existing one is replaced only "
    "when it is an earlier import.",
)
@click.option(
    "--map",
    "mappings",
    multiple=True,
    metavar="KEY=COLUMN",
    help="Column mapping of the generic kind (repeatable; keys listed below).",
)
@click.option(
    "--allow-unparsed",
    is_flag=True,
    help="Import even when more than half the verdicts cannot be read.",
)
@handle_errors
def import_command(
    kind: str, path: Path, out: Path, mappings: tuple[str, ...], allow_unparsed: bool
) -> None:
    """Convert PATH, published judge verdicts of format KIND, into judgments.jsonl records.

    PATH may be any level of a published release (see the README for each one's layout).
    """
    from jurybox.io.verdicts import import_with_summary

    summary = import_with_summary(
        kind, path, out, _parse_mappings(mappings), allow_unparsed=allow_unparsed
    )
    click.echo(f"wrote {summary.written} records to {out}")
    unreadable = summary.describe()
    if unreadable is not None:  # last, where the user looks: judges that failed count as such
        click.echo(unreadable, err=True)


def _parse_mappings(mappings: tuple[str, ...]) -> dict[str, str]:
    """``KEY=COLUMN`` pairs -> dict; a malformed pair is bad input (exit 2)."""
    parsed: dict[str, str] = {}
    for pair in mappings:
        key, sep, column = pair.partition("=")
        if not sep or not key.strip() or not column.strip():
            raise InputError(f"--map expects KEY=COLUMN, got {pair!r}", field="--map")
        parsed[key.strip()] = column.strip()
    return parsed


# --- judge development loop (jurybox.devloop): split -> calibrate (dev, then test) -> estimate


@main.command("split")
@click.argument("labelled", type=_FILE)
@click.option(
    "--out",
    "out_dir",
    type=_FOLDER,
    required=True,
    help="Folder for train/dev/test.jsonl and split_manifest.json.",
)
@click.option("--train", type=float, default=0.15, show_default=True, help="Train share.")
@click.option("--dev", type=float, default=0.425, show_default=True, help="Dev share.")
@click.option("--test", type=float, default=0.425, show_default=True, help="Test share.")
@click.option("--seed", type=int, default=42, show_default=True, help="Shuffle seed.")
@click.option("--force", is_flag=True, help="Overwrite a different split already in --out.")
@handle_errors
def split_command(
    labelled: Path, out_dir: Path, *, train: float, dev: float, test: float, seed: int, force: bool
) -> None:
    """Split LABELLED (items with human Pass/Fail) into train / dev / test, stratified."""
    from jurybox.devloop import split_command as run_split

    fractions = {"train": train, "dev": dev, "test": test}
    run_split(labelled, out_dir, fractions=fractions, seed=seed, force=force, echo=click.echo)


@main.command("calibrate")
@click.argument("config", type=_FILE)
@click.option("--split", "split_name", type=click.Choice(["dev", "test"]), default="dev")
@click.option("--freeze", is_flag=True, help="Measure test once and freeze the prompt.")
@click.option("--force", is_flag=True, help="Measure test again with a changed prompt.")
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N items.")
@handle_errors
def calibrate_command(
    config: Path, split_name: str, freeze: bool, force: bool, limit: int | None
) -> None:
    """TPR/TNR of each criterion of CONFIG against the split's labels, with disagreements."""
    from jurybox.devloop import calibrate_command as run_calibrate

    run_calibrate(
        config,
        split_name,
        freeze=freeze,
        force=force,
        limit=limit,
        echo=click.echo,
        console=_console(),
    )


@main.command("estimate")
@click.argument("config", type=_FILE)
@click.option(
    "--traces",
    type=_FILE,
    help="Unlabelled traces (default: `traces:` in CONFIG).",
)
@click.option(
    "--target-half-width",
    type=float,
    help="Project how many more labels bring the corrected interval to ± this.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N traces.")
@handle_errors
def estimate_command(
    config: Path, traces: Path | None, target_half_width: float | None, limit: int | None
) -> None:
    """Raw and bias-corrected pass rate of each frozen criterion on unlabelled traces."""
    from jurybox.devloop import estimate_command as run_estimate

    run_estimate(
        config,
        traces,
        target_half_width=target_half_width,
        limit=limit,
        echo=click.echo,
        console=_console(),
    )


@main.command("optimize")
@click.argument("config", type=_FILE, required=False)
@click.option("--out", "out_dir", type=_FOLDER, help="Its folder (default: output_dir in CONFIG).")
@click.option("--resume", type=_FOLDER, help="Carry on the optimize in this folder.")
@click.option("--budget-calls", type=click.IntRange(min=1), help="Most judge calls in all.")
@click.option("--budget-usd", type=click.FloatRange(min=0, min_open=True), help="Most USD.")
@click.option("--new-split", is_flag=True, help="Draw a new split (the last one's test is used).")
@handle_errors
def optimize_command(
    config: Path | None,
    *,
    out_dir: Path | None,
    resume: Path | None,
    budget_calls: int | None,
    budget_usd: float | None,
    new_split: bool,
) -> None:
    """Tune a judge's prompt on train and dev; judge the winner once on the frozen test split.

    CONFIG names a run config with gold labels, the judge to tune and its candidates:
    instruction variants (a YAML list or a folder of .md files), a proposer's rewrites,
    few-shot sets from train, rubric variants (docs/optimize.md). They are searched on dev by
    successive halving within --budget-calls / --budget-usd (the test pass set aside first);
    the winner is judged once on test, and the report gives its dev score, its test score
    with a per-item interval and trust level, the optimism gap (dev - test) and every
    candidate; winner.yaml is ready for `jurybox run`.

    \b
    A second optimize on a split whose test was judged is refused unless --new-split.
    --resume DIR carries a stopped optimize on (its budget kept): no recorded judgment is
    asked again. Exits 2 on bad input, 1 when a judge's calls failed (resume later).
    """
    from jurybox.app.optimize import OptimizeOptions, OptimizeStopped, optimize

    options = OptimizeOptions(
        output_dir=out_dir,
        budget_calls=budget_calls,
        budget_usd=budget_usd,
        new_split=new_split,
        console=_console(),
        echo=lambda line: click.echo(line, err=True),
    )
    try:
        report = optimize(config, resume=resume, options=options)
    except OptimizeStopped as exc:
        _say_error(str(exc))
        sys.exit(EXIT_FAILURE)
    click.echo(f"report: {report['files']['report_md']}")
    click.echo(f"winning config: {report['files']['winner_config']}")


# --- jurybox compare (issue 15 / ADR-016) -----------------------------------------------------
@main.command("compare")
@click.argument("runs", nargs=-1, required=True, type=_PATH)
@click.option(
    "--out",
    "out_dir",
    type=_FOLDER,
    required=True,
    help="Folder for compare.json, compare.md and compare.html.",
)
@click.option(
    "--dataset",
    type=_FILE,
    help="The judged dataset (default: the one each run's manifest names, if still there).",
)
@click.option(
    "--human",
    type=_FILE,
    help="Human labels (JSONL/CSV/JSON) applied to every run.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@handle_errors
def compare_command(
    runs: tuple[Path, ...], out_dir: Path, dataset: Path | None, human: Path | None, seed: int
) -> None:
    """Compare RUNS (judgments.jsonl files, run folders or exported Parquet files; at least
    two) over the same items.

    The pages open on the answer, per judge present in both runs: better, worse or no evidence
    on its accuracy against the labels (or its score error against human scores), both runs'
    trust levels, and what changed between their configs (own instructions and template as a
    diff); item links open each run's own report (RUN/report/report.html, if written).

    Every run is compared with the first (B − A): per matched judge, verdict accuracy against
    the gold/human label over items (the sign test, a paired interval on per-item shares of
    both orders and retests), position consistency (McNemar, Bonett-Price), agreement
    between the runs, score differences (paired t, Hodges-Lehmann, Wilcoxon), the items whose
    verdict changed, and, with two or more scoring judges, ADR-016's score study (inter-judge
    alpha/ICC per dimension, ranking stability, conciseness vs length).
    """
    from jurybox.app.compare import CompareOptions, compare_to_dir

    if len(runs) < 2:
        raise click.UsageError("give at least two runs to compare")
    compare_to_dir(
        list(runs),
        out_dir=out_dir,
        dataset=dataset,
        human=human,
        options=CompareOptions(seed=seed),
        console=_console(),
    )


# --- jurybox view (issue 34) ----------------------------------------------------------------
@main.command("view")
@click.argument("directory", type=_FOLDER)
@click.option(
    "--out",
    type=_FILE,
    help="The page to write (default: DIR/index.html); an existing file is replaced only when "
    "it is a page jurybox view wrote.",
)
@handle_errors
def view_command(directory: Path, out: Path | None) -> None:
    """One offline page over every run and comparison under DIRECTORY, however deep.

    \b
    Per run: when it started, its status (an interrupted run says so, with the command that
    resumes it), mode, items, each judge's trust level and the result the trusted judges
    give, linked to its report.html; a run not analysed yet shows the command that analyses
    it. Per comparison (jurybox compare): the runs and each judge's change, linked to
    compare.html. Where two runs or more compared different models with one same model on
    the same items, a leaderboard: each model's win rate over that model, per judge that the
    run's own report trusts. Every table sorts by a click on a column's name. The page loads
    nothing and runs no script but its own; its links are relative, so keep it beside the runs.
    """
    from jurybox.app.view import view_folder

    view_folder(directory, out=out, console=_console(stderr=False))


# --- jurybox show (issue 35) ----------------------------------------------------------------
@main.command("show")
@click.argument("run", type=_PATH)
@click.argument("item")
@click.option("--judge", help="Only this judge's judgments.")
@click.option("--order", help="Only this presentation order (e.g. control_first).")
@click.option("--repeat", type=click.IntRange(min=0), help="Only this repeat (0 = the first).")
@click.option("--criterion", help="Criterion mode: only this criterion.")
@click.option("--retest/--no-retest", default=None, help="Only the retest pass, or only not.")
@click.option("--dataset", type=_FILE, help=_DATASET_HELP)
@click.option(
    "--part",
    type=click.Choice(["system", "user"]),
    help="Print only this part of the one judgment selected, byte for byte (for diff).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per judgment.")
@handle_errors
def show_command(
    run: Path,
    item: str,
    *,
    judge: str | None,
    order: str | None,
    repeat: int | None,
    criterion: str | None,
    retest: bool | None,
    dataset: Path | None,
    part: str | None,
    as_json: bool,
) -> None:
    """Print the exact prompt a judgment of ITEM in RUN (a run folder) was sent.

    For each judgment selected: the system and user text its call carried, then the judge's
    raw answer, tokens and latency. The prompt is rebuilt from the run's manifest (its config
    and its instructions and template as run) and the dataset, and printed only when its hash
    is the record's prompt_hash: byte for byte what the provider was given. Exits 2 when it
    cannot be (a file changed since the run, an imported run).
    """
    from jurybox.app.show import Selection, format_shown, show_prompts, shown_json

    selection = Selection(item, judge, order, repeat, criterion, retest)
    shown = show_prompts(run, selection, dataset=dataset)
    if part is not None:
        if len(shown) != 1:
            raise click.UsageError(
                f"--part needs one judgment, {len(shown)} match: narrow with --judge, --order, "
                "--repeat, --criterion or --retest"
            )
        click.echo(getattr(shown[0].prompt, part), nl=False)
        return
    click.echo(shown_json(shown) if as_json else format_shown(shown), nl=False)


# --- jurybox cascade (issue 36) -------------------------------------------------------------
def _fresh_cascade(config: Path, options: Any, out_dir: Path, flags: dict[str, Any]) -> None:
    """``jurybox cascade CONFIG``: the cascade as a fresh run (app/cascade_run.py)."""
    from jurybox.app.cascade_run import fresh_cascade

    if flags["dataset"] is not None:
        raise click.UsageError("--dataset: a fresh run judges the config's dataset")
    fresh_cascade(
        config,
        options,
        out_dir=out_dir,
        human=flags["human"],
        output_dir=flags["output_dir"],
        resume=flags["resume"],
        console=_console(),
    )


def _call_costs(values: tuple[str, ...]) -> dict[str, float] | None:
    costs = {}
    for value in values:
        name, _, number = value.partition("=")
        try:
            cost = float(number)
        except ValueError:
            cost = -1.0
        if not name.strip() or not 0 <= cost < float("inf"):
            raise click.BadParameter(f"expected JUDGE=COST with COST ≥ 0, got {value!r}")
        costs[name.strip()] = cost
    return costs or None


@main.command("cascade")
@click.argument("run", type=_PATH)
@click.option(
    "--judges", required=True, help="Judges in cascade order, cheap first: cheap,strong[,...]."
)
@click.option(
    "--target", type=float, default=0.9, show_default=True, help="Agreement with humans to ensure."
)
@click.option(
    "--delta", type=float, default=0.1, show_default=True, help="Chance the guarantee may fail."
)
@click.option(
    "--calibration-share",
    type=float,
    default=0.5,
    show_default=True,
    help="Share of the labelled items used to calibrate (the rest measure the cascade).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random split.")
@click.option(
    "--confidence",
    type=click.Choice(["orders", "stated", "both"]),
    default="both",
    show_default=True,
    help="A judge's confidence on an item: agreement of its presentation orders, its stated "
    "confidence, or their product (orders alone for a judge that states none).",
)
@click.option(
    "--call-cost",
    "call_costs",
    multiple=True,
    metavar="JUDGE=COST",
    help="Cost of one call of JUDGE (repeat per judge); default: the records' USD cost, else "
    "their tokens, else one per call.",
)
@click.option(
    "--dataset", type=_FILE, help="Replay: the judged dataset (default: as analyze finds it)."
)
@click.option(
    "--human",
    type=_FILE,
    help="Human labels (default: as analyze finds them; a fresh run: the config's).",
)
@click.option(
    "--out",
    "out_dir",
    type=_FOLDER,
    required=True,
    help="Folder for cascade.json, cascade.md, needs_human.jsonl, needs_human.items.jsonl "
    "(and a fresh run's decisions.jsonl).",
)
@click.option("--output-dir", type=_FOLDER, help="Fresh run: overrides paths.output_dir.")
@click.option(
    "--resume",
    type=_FOLDER,
    help="Fresh run: carry on the cascade run in DIR (its manifest records the flags above, "
    "which must match).",
)
@handle_errors
def cascade_command(run: Path, out_dir: Path, **flags: Any) -> None:
    """Run a cascade of judges (Trust or Escalate), or replay one over RUN's recorded verdicts.

    RUN is a run folder or judgments.jsonl (a run, or an import such as `jurybox import
    llmbar`) where every judge of --judges judged the items: a replay. RUN may instead be a
    run config (.yaml / .yml): a fresh run, in which the first judge judges every item and
    each later judge only the items every judge before it was unsure of (--output-dir,
    --resume as for `jurybox run`; decisions.jsonl says which judge decided each item).

    The labelled items are split at random: on the calibration part each judge, cheap first,
    gets a confidence threshold such that its agreement with humans on the items it decides
    is >= --target with probability >= 1 - --delta (exact binomial test, fixed-sequence); an
    item it is unsure of goes to the next judge, and after the last to "needs a human". On the
    test part it reports the agreement achieved with its interval, the share each judge
    decided, and the cost against the strongest judge alone (a replay calibrates that one the
    same way, beside the uncalibrated rule "escalate when a judge's orders disagree"; a fresh
    run estimates its cost from its calls). needs_human.jsonl lists the items nobody decided,
    ready for labels (fill in preferred_arm), their texts in needs_human.items.jsonl.
    """
    from jurybox.analysis.cascade import CascadeOptions
    from jurybox.app.cascade import cascade_to_dir

    judges = tuple(name.strip() for name in str(flags["judges"]).split(",") if name.strip())
    try:
        options = CascadeOptions(
            judges=judges,
            target=flags["target"],
            delta=flags["delta"],
            calibration_share=flags["calibration_share"],
            seed=flags["seed"],
            confidence=flags["confidence"],
            call_costs=_call_costs(flags["call_costs"]),
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if run.suffix.lower() in (".yaml", ".yml") and not run.is_dir():
        _fresh_cascade(run, options, out_dir, flags)
        return
    if flags["output_dir"] is not None or flags["resume"] is not None:
        raise click.UsageError("--output-dir and --resume are for a fresh run (RUN a config)")
    cascade_to_dir(
        run,
        options,
        out_dir=out_dir,
        dataset=flags["dataset"],
        human=flags["human"],
        console=_console(),
    )


if __name__ == "__main__":
    main()
