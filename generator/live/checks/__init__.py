"""Live checks, one small module per resource (pytest-testinfra style)."""
