"""Stage 1-3: YAML with the line and column of every node, cerberus schemas, and resolution into frozen dataclasses."""
