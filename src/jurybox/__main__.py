"""`python -m jurybox` runs the command line."""

import gc

gc.disable()  # start-up (issue #19): from the start; jurybox.cli resumes it (GC_STATE)

from jurybox import cli  # noqa: E402 - after the GC is paused

cli.GC_STATE["paused"] = True
cli.main()
