"""The judge development loop (Shankar & Husain, "Application-Centric AI Evals", ch. 5).

One judge per failure mode, binary Pass/Fail. Labelled data is split into train (the only source
of few-shot examples), dev (iterate the prompt) and test (measured once, on the frozen prompt):
``split``. ``calibrate`` measures TPR/TNR on dev and lists the disagreements, then freezes the
prompt on test (once per prompt hash). ``estimate`` runs the frozen judge on unlabelled traces
and reports the raw and the Rogan–Gladen corrected pass rate with its interval.
"""

from jurybox.devloop.calibrate import CalibrationReport, CriterionCalibration
from jurybox.devloop.commands import calibrate_command, estimate_command, split_command
from jurybox.devloop.config import Devloop, DevloopConfig, load_devloop
from jurybox.devloop.estimate import (
    CriterionEstimate,
    EstimateOptions,
    EstimateReport,
    LabelProjection,
    project_labels,
)
from jurybox.devloop.leakage import resolve_examples
from jurybox.devloop.split import (
    content_hash,
    load_split,
    normalise_text,
    split_labelled,
)

__all__ = [
    "CalibrationReport",
    "CriterionCalibration",
    "CriterionEstimate",
    "Devloop",
    "DevloopConfig",
    "EstimateOptions",
    "EstimateReport",
    "LabelProjection",
    "calibrate_command",
    "content_hash",
    "estimate_command",
    "load_devloop",
    "load_split",
    "normalise_text",
    "project_labels",
    "resolve_examples",
    "split_command",
    "split_labelled",
]
# ``calibrate`` and ``estimate`` are not re-exported: they would shadow the submodules of the
# same names (``import jurybox.devloop.estimate`` must give the module).
