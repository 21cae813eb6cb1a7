"""What gen knows of a model's checkpoint: ``catalogs/models/<model>.json`` and its capture.

A snapshot holds the facts of the checkpoint a model manifest deploys (config.json whole,
generation_config.json, the safetensors index and headers, a hash of each file read, the
remote-code files config.json names), captured by ``gen model snapshot`` and committed.
The stage sits between ``load`` and ``sglang``: rules (sglang/) and memory (plan/) read
the facts from here, never the network.
"""
