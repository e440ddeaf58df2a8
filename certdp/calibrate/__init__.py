"""Calibration: float searches propose sigma, certified bounds decide (untrusted search, trusted check)."""

from certdp.calibrate.random_allocation import CalibrationResult, calibrate_tv

__all__ = ["CalibrationResult", "calibrate_tv"]
