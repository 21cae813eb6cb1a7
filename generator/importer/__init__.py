"""``gen import``: a model-card command line or an old unit's ExecStart as a model manifest."""
