"""Judge backends. Only ``providers/<vendor>.py`` imports that vendor's SDK."""

from jurybox.providers.base import Provider, read_api_key
from jurybox.providers.registry import create_provider, register_provider

__all__ = ["Provider", "create_provider", "read_api_key", "register_provider"]
