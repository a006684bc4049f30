"""Provider batch runs (``--batch``): plan batches under vendor limits, log them durably in the
run folder before waiting, poll gently, collect results through the synchronous path's parser
and resubmit what failed. See ``docs/batch.md``."""

from jurybox.pipeline.batch.engine import BatchHost, BatchSettings, JudgeBatches
from jurybox.pipeline.batch.log import BATCH_LOG_FILE, BatchEntry, BatchLog, read_log

__all__ = [
    "BATCH_LOG_FILE",
    "BatchEntry",
    "BatchHost",
    "BatchLog",
    "BatchSettings",
    "JudgeBatches",
    "read_log",
]
