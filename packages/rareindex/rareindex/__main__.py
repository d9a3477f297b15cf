"""``python -m rareindex`` is the ``rareindex`` command."""

from .cli import main

main()
