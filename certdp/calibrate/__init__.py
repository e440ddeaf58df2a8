"""Calibration: float searches propose sigma, certified bounds decide (untrusted search, trusted check)."""

from certdp.calibrate.random_allocation import CalibrationResult, calibrate_tv
from certdp.calibrate.subsampled import EpsCalibration, calibrate_epsilon

__all__ = ["CalibrationResult", "EpsCalibration", "calibrate_epsilon", "calibrate_tv"]
