"""``python -m workers`` is the ``rareindex`` command."""

from .cli import main

main()
