"""The GPU behind `tcspec hw`: a CUDA device through the driver API (cuda-python).

:class:`CudaDevice` loads the generated PTX of the device's target with
``cuModuleLoadData`` (the driver JIT-compiles it; no nvcc, no ptxas needed)
and launches one CTA per tile with ``cuLaunchKernel``. Anything that can
run a harness on operand images (the tests' emulated device) has the same
two members: :attr:`sm` and :meth:`launch`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tcspec.hw.ptx import image_words, module
from tcspec.hw.table import TARGETS, Harness
from tcspec.words import UsageError


class NoGpuError(UsageError):
    """No GPU (or no CUDA driver bindings) here: ``tcspec hw`` exits 2 saying why."""


class Device(Protocol):
    """Runs harnesses on operand images: ``launch(h, images, tiles) -> D image``."""

    sm: int
    provenance: dict[str, Any]

    def launch(self, h: Harness, images: dict[str, np.ndarray], tiles: int) -> np.ndarray: ...


def target_for(h: Harness, sm: int) -> str | None:
    """The PTX target whose module this device loads for ``h`` (None: it cannot run it)."""
    return h.target if h.runs_on(sm) else None


def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6
        except ImportError:
            raise NoGpuError("no CUDA driver bindings here (pip install "
                                      "cuda-python); `tcspec hw` needs a GPU") from None
    return driver


def _kernel_driver_version() -> str:
    try:
        text = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    for token in text.split():
        if token.count(".") >= 1 and token.replace(".", "").isdigit():
            return token
    return "unknown"


class CudaDevice:
    """CUDA device ``ordinal``; ``NoGpuError`` if there is none."""

    def __init__(self, ordinal: int = 0) -> None:
        self.cu = _driver()
        try:
            (err,) = self.cu.cuInit(0)
        except Exception as exc:  # the bindings raise their own types when libcuda is absent
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise NoGpuError(f"no NVIDIA driver here (cuInit: {type(exc).__name__}"
                             f"{': ' + first if first else ''}); `tcspec hw` needs a GPU "
                             "and its driver") from None
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise NoGpuError(f"no usable CUDA GPU here (cuInit: {err.name}); "
                                      "`tcspec hw` needs one")
        try:
            count = self._ok(self.cu.cuDeviceGetCount())
        except RuntimeError as exc:
            raise NoGpuError(f"no usable CUDA GPU here ({exc})") from None
        if not 0 <= ordinal < count:
            raise NoGpuError(f"no CUDA device {ordinal} (this machine has {count})")
        self.dev = self._ok(self.cu.cuDeviceGet(ordinal))
        attr = self.cu.CUdevice_attribute
        major = self._ok(self.cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = self._ok(self.cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        self.sm = 10 * major + minor
        name = self._ok(self.cu.cuDeviceGetName(96, self.dev))
        version = self._ok(self.cu.cuDriverGetVersion())
        self.ctx = self._ok(self.cu.cuDevicePrimaryCtxRetain(self.dev))
        self._ok(self.cu.cuCtxSetCurrent(self.ctx))
        from tcspec.spec.provenance import tcspec_version

        self.provenance = {
            "source": "hardware", "gpu": bytes(name).split(b"\0")[0].decode(),
            "sm": f"sm_{self.sm}", "driver": _kernel_driver_version(),
            "cuda": f"{version // 1000}.{version % 1000 // 10}", "tcspec": tcspec_version()}
        self._modules: dict[str, Any] = {}

    def _ok(self, result: Any) -> Any:
        err, *values = result if isinstance(result, tuple) else (result,)
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver call failed: {err.name}")
        return values[0] if len(values) == 1 else values

    @functools.cache  # noqa: B019 - one device object per process
    def function(self, h: Harness) -> Any:
        """The loaded kernel of ``h`` (its target's module JIT-compiled once)."""
        target = target_for(h, self.sm)
        if target is None or target not in TARGETS:
            raise ValueError(f"{h.name} does not run on sm_{self.sm}")
        if target not in self._modules:
            text = module(target).encode() + b"\0"
            self._modules[target] = self._ok(self.cu.cuModuleLoadData(text))
        return self._ok(self.cu.cuModuleGetFunction(self._modules[target], h.entry.encode()))

    def launch(self, h: Harness, images: dict[str, np.ndarray], tiles: int) -> np.ndarray:
        """Copy the images in, run ``tiles`` CTAs of ``h``, return the D image."""
        words = image_words(h)
        buffers, keep = [], []
        try:
            for param in ("A", "B", "C", "D", "SA", "SB"):
                host = images.get(param)
                size = max(4, tiles * words[param] * 4)
                ptr = self._ok(self.cu.cuMemAlloc(size))
                buffers.append(ptr)
                if host is not None:
                    data = np.ascontiguousarray(host, dtype=np.uint32)
                    self._ok(self.cu.cuMemcpyHtoD(ptr, data.ctypes.data, data.nbytes))
            values = [np.array([int(p)], dtype=np.uint64) for p in buffers]
            keep.extend(values)
            args = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            self._ok(self.cu.cuLaunchKernel(self.function(h), tiles, 1, 1, h.threads, 1, 1, 0,
                                            0, args.ctypes.data, 0))
            self._ok(self.cu.cuCtxSynchronize())
            out = np.zeros((tiles, words["D"]), dtype=np.uint32)
            self._ok(self.cu.cuMemcpyDtoH(out.ctypes.data, buffers[3], out.nbytes))
            return out
        finally:
            for ptr in buffers:
                self.cu.cuMemFree(ptr)
