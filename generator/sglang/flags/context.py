"""One run of the flag check: the pin's catalog, the other pins, the flag tables, the findings.

The lookups every concept of the check shares live here: a dest under its other names
across pins, and the other pins ordered nearest first.
"""

from __future__ import annotations

from typing import Sequence

from generator.errors import Diagnostics
from generator.sglang.catalog import Action, Catalog, FlagTables, load_flag_tables, version_key


class Context:
    """The catalog, the other committed pins, the flag tables and the findings so far."""

    def __init__(self, catalog: Catalog, diags: Diagnostics, others: Sequence[Catalog],
                 tables: FlagTables | None = None):
        self.catalog = catalog
        self.diags = diags
        self.others = [c for c in others if c.pin != catalog.pin]
        # The caller's tables when it loaded them for a whole host (one stat per table file).
        self.tables: FlagTables = tables if tables is not None else load_flag_tables(catalog.source_file)

    def dest_action(self, catalog: Catalog, dest: str) -> Action | None:
        """The action for ``dest`` in ``catalog``, trying the dest's other names across pins."""
        for candidate in self.tables.dest_names(dest):
            action = catalog.by_dest(candidate)
            if action is not None:
                return action
        return None

    def others_nearest_first(self) -> list[Catalog]:
        """Other pins, older ones first (newest of them first), then newer ones (oldest first)."""
        here = version_key(self.catalog.version)

        def key(c: Catalog) -> tuple[object, ...]:
            v = version_key(c.version)
            if here is None or v is None:
                return (2, c.pin)
            if v < here:
                return (0, tuple(-p for p in v))
            return (1, v)

        return sorted(self.others, key=key)
