"""The per-host pipeline, the fleet scheduler with its content-keyed cache, and upgrade impact."""
