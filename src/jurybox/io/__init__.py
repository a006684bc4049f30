"""Every file format jurybox reads or writes, and nothing above them.

- ``jurybox.io.datasets``: items (JSONL/JSON/CSV/Parquet, column mapping) and human-label files.
- ``jurybox.io.judgments``: the judgments file, the only JSONL reader/writer of records.
- ``jurybox.io.verdicts``: existing verdict files (LLMBar, PandaLM, JudgeBench, generic tables)
  imported as records, one module per format.
"""
