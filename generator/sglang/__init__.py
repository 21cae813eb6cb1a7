"""What gen knows about SGLang: flag catalogs and tables, the probe that captures them, catalog diffs, flag checks and cross-flag rules."""
