"""`python -m jurybox` runs the command line."""

from jurybox.cli import main

main()
