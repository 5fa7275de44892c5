"""Driver inputs of one vehicle at time t: steering angle and front tire speed from tables.

Tables are `core.params.DriverParams` (K knots, padded by repeating the last knot): piecewise
constant (value[i] on [times[i], times[i+1])) or piecewise linear, held constant outside.
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.params import DriverParams

__all__ = ["table_value", "driver_inputs", "wheel_table_value", "wheel_inputs"]


def table_value(times, values, linear, t):
    """Driver table value at time t: piecewise constant (value[i] on [times[i], times[i+1])),
    or piecewise linear when `linear` is 1; held constant outside the table."""
    if times.shape[0] == 1:  # a constant input (static shape): no search
        return values[0]
    idx = jnp.clip(jnp.searchsorted(times, t, side="right") - 1, 0, times.shape[0] - 1)
    return jnp.where(linear > 0.5, jnp.interp(t, times, values), values[idx])


def driver_inputs(d: DriverParams, t):
    """Steering angle [rad] and front tire speed [m/s] of one vehicle at time t."""
    steer = table_value(d.steer_times, d.steer_values, d.steer_linear, t)
    speed = table_value(d.speed_times, d.speed_values, d.speed_linear, t)
    return steer, speed


def wheel_table_value(times, values, linear, t):
    """Per-wheel table value (W,) at time t: values (K, W) over times (K,), as `table_value`."""
    if times.shape[0] == 1:
        return values[0]
    k = times.shape[0]
    idx = jnp.clip(jnp.searchsorted(times, t, side="right") - 1, 0, k - 1)
    lo = jnp.clip(idx, 0, k - 2)
    span = times[lo + 1] - times[lo]
    frac = jnp.clip((t - times[lo]) / jnp.where(span > 0.0, span, 1.0), 0.0, 1.0)
    interp = values[lo] + frac * (values[lo + 1] - values[lo])
    return jnp.where(linear > 0.5, interp, values[idx])


def wheel_inputs(d: DriverParams, t):
    """(brake, lock, throttle) (W,) of one vehicle at time t, or None when the batch has no
    per-wheel tables (DriverParams.wheels is None: compiled out)."""
    w = d.wheels
    if w is None:
        return None
    return (wheel_table_value(w.brake_times, w.brake_values, w.brake_linear, t),
            wheel_table_value(w.lock_times, w.lock_values, w.lock_linear, t),
            wheel_table_value(w.throttle_times, w.throttle_values, w.throttle_linear, t))
