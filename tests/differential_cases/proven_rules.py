"""Generated cases for rules that the coverage files name but the grid corpus never reaches."""

from __future__ import annotations

from differential_cases import product_cases

BOTH = ("0.5.9", "0.5.23")

CASES = [
    *product_cases("dp-lm-head", BOTH, {"--tp-size": 2},
                   {"--enable-dp-lm-head": [True, None], "--dp-size": [None, 2], "--enable-dp-attention": [None, True]}),
    *product_cases("dp-attn-both", ("0.5.23",), {"--tp-size": 4},
                   {"--dp-size": [None, 2], "--attn-dp-size": [None, 2]}),
    *product_cases("served-model-colon", BOTH, {},
                   {"--served-model-name": [None, "qwen:7b", "qwen-7b"]}),
]
