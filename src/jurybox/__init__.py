"""jurybox: run panels of LLM judges over model outputs and measure how far to trust them."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("jurybox")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
