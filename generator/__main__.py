"""``python -m generator`` runs the ``gen`` command line."""

from generator.cli.main import main

main(prog_name="gen")
