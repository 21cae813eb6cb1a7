"""gen: render version-pinned SGLang systemd services from manifests and inventories."""

__version__ = "0.1.0"
