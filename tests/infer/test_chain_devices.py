"""The chains split over two CPU devices (infer/sampler.py, over_chains; JAXMEDUSA_CPU_DEVICES=2,
core/xla_flags.py) draw what one device draws: each chain has its own key either way, so
only the round-off of a batch of 2 against 4 differs. Run in a child process (the device
count is fixed when JAX starts)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

CHILD = r"""
import json
import jax, jax.numpy as jnp, numpy as np
import jaxmedusa  # sets XLA_FLAGS (two CPU devices) before JAX starts
from jaxmedusa.infer.sampler import Sampler
f = lambda u: -0.5 * jnp.sum((u - 1.0) ** 2 / jnp.array([1.0, 4.0]))   # N((1, 1), diag(1, 4))
out = {"devices": len(jax.devices())}
samplers = {"one": Sampler(f, 4, chunk=20, dense=True, devices=jax.devices()[:1]),
            "two": Sampler(f, 4, chunk=20, dense=True)}
samplers["two_again"] = samplers["two"]  # the same compiled programs, run again
for name, s in samplers.items():
    states, params = s.warmup(jax.random.PRNGKey(0), jnp.zeros((4, 2)), 60)
    _, part = s.chunk(jax.random.PRNGKey(1), states, params)
    out[name] = np.asarray(part[0]).tolist()
    out[name + "_devices"] = len(s.devices)
print(json.dumps(out))
"""


def test_two_devices_draw_what_one_draws():
    env = {**os.environ, "JAXMEDUSA_CPU_DEVICES": "2"}
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    assert r["devices"] == 2 and r["one_devices"] == 1 and r["two_devices"] == 2
    one, two = np.asarray(r["one"]), np.asarray(r["two"])
    assert one.shape == (4, 20, 2)
    # the same seed on the same devices: the same draws to the bit
    assert np.array_equal(two, np.asarray(r["two_again"]))
    # one device against two: the same trajectories, to round-off grown over 80 NUTS steps
    # of a smooth Gaussian (measured 2.5e-12); 1e-8 would still catch a chain given another
    # chain's key or start (differences of order 1)
    assert np.max(np.abs(one - two)) < 1e-8, np.max(np.abs(one - two))
