"""Stage 4-5: GPU/NUMA placement, multi-node clusters, and the argv each service runs."""
