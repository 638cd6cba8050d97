"""Memory bandwidth and capacity of common accelerators, per GPU, from the vendors' specs.

The step model's memory-bandwidth bound (``analyses.stepmodel``) needs the HBM bandwidth of
one GPU. A value run.yaml gives (``hardware.hbm_tb_s``) always wins; without one, the GPU
that run.yaml names (``hardware.gpu_model``) is looked up here, and the figures say the
value is the vendor's specification from this table, not a measurement (kernels achieve
less). A GPU this table does not know gives nothing: the bandwidth is not stated and the
bound not evaluable.

Bandwidth in TB/s (10^12 bytes per second), memory in GB (10^9 bytes), as the datasheets
print them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str            # as the report names it
    hbm_tb_s: float      # memory bandwidth of one GPU, TB/s
    memory_gb: float     # memory of one GPU, GB
    memory: str          # the memory's kind
    source: str          # the vendor document the values come from


# (pattern over the normalised model name, GPU); the first match wins, so a name that holds
# another's (GB200 holds B200, H100 PCIe holds H100) comes first
GPUS: tuple[tuple[str, Gpu], ...] = (
    # NVIDIA Blackwell Ultra HGX B300 datasheet (2025): 288 GB HBM3e, 8 TB/s per GPU
    (r"\bB300\b", Gpu("NVIDIA B300", 8.0, 288, "HBM3e",
                      "NVIDIA HGX B300 datasheet")),
    # NVIDIA GB200 NVL72 datasheet: 13.4 TB HBM3e and 576 TB/s over 72 GPUs (186 GB, 8 TB/s)
    (r"\bGB200\b", Gpu("NVIDIA GB200", 8.0, 186, "HBM3e",
                       "NVIDIA GB200 NVL72 datasheet")),
    # NVIDIA DGX B200 datasheet: 1,440 GB HBM3e and 64 TB/s over 8 GPUs (180 GB, 8 TB/s)
    (r"\bB200\b", Gpu("NVIDIA B200", 8.0, 180, "HBM3e", "NVIDIA DGX B200 datasheet")),
    # NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 141 GB HBM3e, 4.8 TB/s
    (r"\bH200\b", Gpu("NVIDIA H200", 4.8, 141, "HBM3e", "NVIDIA H200 datasheet (SXM)")),
    # NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe: 80 GB HBM2e, 2.0 TB/s
    (r"\bH100\b.*\bPCIE\b|\bPCIE\b.*\bH100\b", Gpu("NVIDIA H100 PCIe", 2.0, 80, "HBM2e",
                                                   "NVIDIA H100 datasheet (PCIe)")),
    # NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 80 GB HBM3, 3.35 TB/s (nvidia-smi
    # names it "H100 80GB HBM3"); H100 NVL (94 GB) is another part and is not matched
    (r"\bH100\b(?!.*\bNVL\b)", Gpu("NVIDIA H100 SXM", 3.35, 80, "HBM3",
                                   "NVIDIA H100 datasheet (SXM)")),
    # NVIDIA H20 product brief: 96 GB HBM3, 4.0 TB/s
    (r"\bH20\b", Gpu("NVIDIA H20", 4.0, 96, "HBM3", "NVIDIA H20 product brief")),
    # NVIDIA A100 Tensor Core GPU datasheet, A100 80GB PCIe: 1,935 GB/s
    (r"\bA100\b.*\b80 ?GB\b.*\bPCIE\b|\bA100\b.*\bPCIE\b.*\b80 ?GB\b",
     Gpu("NVIDIA A100 80GB PCIe", 1.935, 80, "HBM2e", "NVIDIA A100 datasheet (80GB PCIe)")),
    # NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: 2,039 GB/s
    (r"\bA100\b.*\b80 ?GB\b", Gpu("NVIDIA A100 80GB SXM", 2.039, 80, "HBM2e",
                                  "NVIDIA A100 datasheet (80GB SXM)")),
    # NVIDIA L40S datasheet: 48 GB GDDR6 with ECC, 864 GB/s
    (r"\bL40S\b", Gpu("NVIDIA L40S", 0.864, 48, "GDDR6", "NVIDIA L40S datasheet")),
    # NVIDIA DGX Spark datasheet (GB10 Grace Blackwell Superchip): 128 GB LPDDR5x unified
    # system memory, 273 GB/s
    (r"\bGB10\b|\bDGX SPARK\b", Gpu("NVIDIA GB10 (DGX Spark)", 0.273, 128, "LPDDR5X",
                                    "NVIDIA DGX Spark datasheet")),
    # AMD Instinct MI355X data sheet: 288 GB HBM3E, 8 TB/s
    (r"\bMI355X\b", Gpu("AMD Instinct MI355X", 8.0, 288, "HBM3E",
                        "AMD Instinct MI355X data sheet")),
    # AMD Instinct MI325X data sheet: 256 GB HBM3E, 6 TB/s
    (r"\bMI325X\b", Gpu("AMD Instinct MI325X", 6.0, 256, "HBM3E",
                        "AMD Instinct MI325X data sheet")),
    # AMD Instinct MI300X data sheet: 192 GB HBM3, 5.3 TB/s
    (r"\bMI300X\b", Gpu("AMD Instinct MI300X", 5.3, 192, "HBM3",
                        "AMD Instinct MI300X data sheet")),
)


def normalised(model: str) -> str:
    """A GPU's name as matched: upper case, punctuation as spaces, single spaces
    ("NVIDIA A100-SXM4-80GB" -> "NVIDIA A100 SXM4 80GB")."""
    return " ".join(re.sub(r"[^A-Z0-9]+", " ", model.upper()).split())


def lookup(model: str | None) -> Gpu | None:
    """The table's GPU that run.yaml's ``hardware.gpu_model`` names, else None.

    >>> lookup("NVIDIA B300").hbm_tb_s, lookup("MI355X").name, lookup("GB10").memory
    (8.0, 'AMD Instinct MI355X', 'LPDDR5X')
    >>> lookup("NVIDIA GB200 NVL72").name, lookup("NVIDIA H100 PCIe").hbm_tb_s
    ('NVIDIA GB200', 2.0)
    >>> lookup("NVIDIA GB300") is None, lookup(None) is None
    (True, True)
    """
    if not model:
        return None
    name = normalised(str(model))
    return next((gpu for pattern, gpu in GPUS if re.search(pattern, name)), None)


@dataclass(frozen=True)
class Bandwidth:
    """The HBM bandwidth a bound uses, and where it came from."""

    tb_s: float
    gpu: Gpu | None       # the table's entry; None: run.yaml stated the value

    @property
    def from_table(self) -> bool:
        return self.gpu is not None


def hbm_bandwidth(declared: float | None, gpu_model: str | None) -> Bandwidth | None:
    """run.yaml's ``hbm_tb_s`` where given (it wins), else the table's value for the GPU
    run.yaml names, else None (not stated).

    >>> hbm_bandwidth(7.5, "NVIDIA B300").tb_s, hbm_bandwidth(None, "NVIDIA B300").from_table
    (7.5, True)
    >>> hbm_bandwidth(None, "Some Accelerator") is None
    True
    """
    if declared is not None:
        return Bandwidth(declared, None)
    gpu = lookup(gpu_model)
    return Bandwidth(gpu.hbm_tb_s, gpu) if gpu else None
