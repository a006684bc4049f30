"""Every file format jurybox reads or writes, and nothing above them.

- ``jurybox.io.datasets``: items (JSONL/JSON/CSV/Parquet, column mapping) and human-label files.
- ``jurybox.io.judgments``: the judgments file's writer, resume repair and line reader.
- ``jurybox.io.record_table``: the judgments file (or a Parquet export) as one Arrow table, the
  only reader into a table (the frame, the explorer, export and compare read it).
- ``jurybox.io.verdicts``: existing verdict files (LLMBar, PandaLM, JudgeBench, generic tables)
  imported as records, one module per format.
"""
