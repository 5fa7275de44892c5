"""Driver inputs of one vehicle at time t: steering angle and front tire speed from tables.

Tables are `core.params.DriverParams` (K knots, padded by repeating the last knot): piecewise
constant (value[i] on [times[i], times[i+1])) or piecewise linear, held constant outside.
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.params import DriverParams

__all__ = ["table_value", "driver_inputs"]


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
