"""Generated cases of the disaggregation rules written after the topic split, against the real SGLang."""

from __future__ import annotations

from differential_cases import product_cases

OLD = ("0.5.9",)

CASES = [
    # ib-devices-0509 (X082): a valid list in PD mode would meet the test machine's missing
    # /sys/class/infiniband (a RuntimeError of the host), so the accepted neighbours leave
    # the device check unreached.
    *product_cases("ib-devices-0509", OLD, {"--disaggregation-ib-device": "mlx5_0,mlx5_0"},
                   {"--disaggregation-mode": [None, "prefill", "decode"],
                    "--disaggregation-transfer-backend": [None, "nixl"]}),
    *product_cases("ib-devices-0509", OLD, {"--disaggregation-mode": "prefill"},
                   {"--disaggregation-ib-device": [" , ", "a, a", None]}),
    *product_cases("ib-devices-0509", OLD, {},
                   {"--encoder-transfer-backend": ["mooncake"], "--disaggregation-ib-device": ["a,a", None]}),
]
