"""The ``gen`` command line: thin click layers over the pipeline; no logic lives here."""
