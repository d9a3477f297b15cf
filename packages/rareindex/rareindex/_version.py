"""The version of the index (CLI ``--version``, logs)."""

__version__ = "0.1.0"
