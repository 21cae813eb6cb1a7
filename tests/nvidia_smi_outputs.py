"""Real nvidia-smi output, as users posted it in GitHub issues: the parsers' test data.

Each constant names where it was posted. Whitespace is as posted: nvidia-smi separates
``topo -m`` cells with tabs; issue pastes often turn them into blanks (both are read).
"""

# 8x RTX 4090 on a dual-socket PCIe box (all GPU pairs SYS), tab-separated, two NIC rows:
# https://github.com/NVIDIA/go-gpuallocator/issues/17
TOPO_8X4090_PCIE = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU2\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU3\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU4\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU5\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU6\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tPHB\tPHB\t56-111,168-223\t1\t\tN/A\n"
    "GPU7\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "NIC0\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPHB\tSYS\t X \tPIX\n"
    "NIC1\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPHB\tSYS\tPIX\t X\n"
)

# The legend nvidia-smi prints after the `topo -m` matrix, as posted below it in
# https://github.com/HazyResearch/ThunderKittens/issues/167 (the stand-in prints it too).
TOPO_LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""

# 8x H100 SXM (NVSwitch: NV18 between every pair), pasted with blanks, then the legend above:
# https://github.com/HazyResearch/ThunderKittens/issues/167
TOPO_8XH100_NV18 = """\
        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    0-47,96-143     0               N/A
GPU1    NV18     X      NV18    NV18    NV18    NV18    NV18    NV18    0-47,96-143     0               N/A
GPU2    NV18    NV18     X      NV18    NV18    NV18    NV18    NV18    0-47,96-143     0               N/A
GPU3    NV18    NV18    NV18     X      NV18    NV18    NV18    NV18    0-47,96-143     0               N/A
GPU4    NV18    NV18    NV18    NV18     X      NV18    NV18    NV18    48-95,144-191   1               N/A
GPU5    NV18    NV18    NV18    NV18    NV18     X      NV18    NV18    48-95,144-191   1               N/A
GPU6    NV18    NV18    NV18    NV18    NV18    NV18     X      NV18    48-95,144-191   1               N/A
GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18     X      48-95,144-191   1               N/A
""" + TOPO_LEGEND

# 8x H200 (HGX), tab-separated, ten NIC columns; the first two GPU rows as posted in
# `python3 -m sglang.check_env`: https://github.com/sgl-project/sglang/issues/15359
TOPO_8XH200_HEAD = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tNIC2\tNIC3\tNIC4\tNIC5\tNIC6\tNIC7\tNIC8\tNIC9"
    "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPIX\tNODE\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS"
    "\t0-47,96-143\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tPIX\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS"
    "\t0-47,96-143\t0\t\tN/A\n"
)

# Two NVLink-paired GPUs among Mellanox NICs, tab-separated (lmdeploy check_env):
# https://github.com/InternLM/lmdeploy/pull/1944
TOPO_2X_NV12_MLX = (
    "\tGPU0\tGPU1\tmlx5_0\tmlx5_1\tmlx5_2\tmlx5_3\tmlx5_4\tmlx5_5\tmlx5_6\tmlx5_7\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV12\tSYS\tSYS\tSYS\tSYS\tNODE\tNODE\tPXB\tPXB\t48-95,144-191\t1\n"
    "GPU1\tNV12\t X \tSYS\tSYS\tSYS\tSYS\tNODE\tNODE\tPXB\tPXB\t48-95,144-191\t1\n"
    "mlx5_0\tSYS\tSYS\t X \tPIX\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\n"
)

# The summary table's first lines on an 8x H200 box: https://github.com/sgl-project/sglang/issues/3196
SUMMARY_H200 = """\
Thu Jan 30 05:00:03 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H200                    On  |   00000000:03:00.0 Off |                    0 |
| N/A   33C    P0            115W /  700W |  124585MiB / 143771MiB |      0%      Default |
"""

# A torch without sm_120 kernels on an RTX PRO 6000 (the "no kernel image" class), torch's own
# warning: https://github.com/xorbitsai/inference/issues/3866 and vllm-project/vllm#23781
TORCH_WITHOUT_SM120 = ("The current PyTorch install supports CUDA capabilities "
                       "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.")
