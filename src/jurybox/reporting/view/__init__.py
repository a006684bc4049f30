"""The view model: formatting (the only place numbers are rounded) and the tables renderers draw."""
