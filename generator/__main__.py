"""``python -m generator`` runs the ``gen`` command line."""

from .cli import main

main(prog_name="gen")
