"""Unit rows of the disaggregation rules written after the topic split (ib-devices-0509)."""

from __future__ import annotations

from rule_tables import Row

PD = ["--disaggregation-mode", "prefill"]
IB = "--disaggregation-ib-device"

ROWS: list[Row] = [
    # ib-devices-0509 (X082): 0.5.9's _validate_ib_devices refuses an empty or repeated device list
    ("0.5.9", [*PD, IB, "mlx5_0,mlx5_0"], {}, ["X082"]),
    ("0.5.9", ["--disaggregation-mode", "decode", IB, "mlx5_0, mlx5_0"], {}, ["X082"]),
    ("0.5.9", [*PD, IB, " , "], {}, ["X082"]),
    ("0.5.9", [*PD, IB, "mlx5_0,mlx5_1"], {}, []),
    ("0.5.9", [IB, "mlx5_0,mlx5_0"], {}, []),  # no Mooncake PD transfer: SGLang does not validate it
    ("0.5.9", [*PD, "--disaggregation-transfer-backend", "nixl", IB, "a,a"], {}, []),
    ("0.5.9", ["--encoder-transfer-backend", "mooncake", IB, "a,a"], {}, ["X082"]),
    ("0.5.9", ["--elastic-ep-backend", "mooncake", "--mooncake-ib-device", "a,a", "--ep-size", "2", "--tp-size", "2"],
     {}, ["X082"]),
    ("0.5.23", [*PD, IB, "mlx5_0,mlx5_0"], {}, []),  # 0.5.23 drops the repeat with a warning
    ("0.5.23", [*PD, IB, " , "], {}, ["X068"]),  # and refuses an empty list under its own rule
]
