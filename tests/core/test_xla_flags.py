"""core/xla_flags.py: the XLA options jaxmedusa sets, and that they make XLA compile the time
loop whole (the point of setting them)."""
from __future__ import annotations

import os
import re

import jax
import jax.numpy as jnp
import pytest

from jaxmedusa.core import xla_flags
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.build import build_batch
from jaxmedusa.io.scenario_toml import load_scenario

from helpers import EXAMPLES

SMALL_CALL = "xla_cpu_small_call"  # the attribute XLA gives a loop it compiled whole


def test_apply_adds_its_options_once():
    env = {}
    flags = xla_flags.apply(env)
    assert f"xla_cpu_small_while_loop_byte_threshold={xla_flags.SMALL_LOOP_BYTES}" in flags
    assert f"--xla_backend_optimization_level={xla_flags.OPT_LEVEL}" in flags.split()
    if xla_flags._jaxlib_minor() == xla_flags.CHECKED_JAXLIB:
        assert "--xla_cpu_experimental_ynn_fusion_type=" in flags.split()
        # LLVM's option, in the same map (comma-separated entries; XLA passes it to LLVM)
        extra = next(f for f in flags.split() if f.startswith("--xla_backend_extra_options="))
        assert extra.split("=", 1)[1].split(",")[1] == f"-unroll-full-max-count={xla_flags.FULL_UNROLL_MAX}"
    assert xla_flags.apply(env) == flags  # a second import adds nothing


def test_apply_keeps_the_users_options_and_can_be_switched_off():
    env = {"XLA_FLAGS": "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=7 "
                        "--xla_cpu_experimental_ynn_fusion_type=dot --xla_backend_optimization_level=3"}
    assert xla_flags.apply(env) == env["XLA_FLAGS"]
    assert env["XLA_FLAGS"].count("threshold=") == 1 and "ynn_fusion_type=dot" in env["XLA_FLAGS"]
    assert env["XLA_FLAGS"].count("optimization_level") == 1
    off = {xla_flags.OFF_VARIABLE: "0", "XLA_FLAGS": "--xla_cpu_max_isa=AVX"}
    assert xla_flags.apply(off) == "--xla_cpu_max_isa=AVX"
    assert off["XLA_FLAGS"] == "--xla_cpu_max_isa=AVX"


def test_cpu_devices_only_when_asked_for():
    flag = "--xla_force_host_platform_device_count"
    assert flag not in xla_flags.apply({})  # off by default: one device, as JAX's own default
    assert f"{flag}=2" in xla_flags.apply({xla_flags.DEVICES_VARIABLE: "2"}).split()
    for value in ("1", "0", "two", ""):  # one device, or not a count: nothing added
        assert flag not in xla_flags.apply({xla_flags.DEVICES_VARIABLE: value})
    mine = {xla_flags.DEVICES_VARIABLE: "2", "XLA_FLAGS": f"{flag}=4"}  # the user's own count wins
    assert xla_flags.apply(mine).count(flag) == 1 and f"{flag}=4" in mine["XLA_FLAGS"]


def _entry(hlo: str) -> str:
    """The ENTRY computation of an optimised HLO module's text."""
    return hlo[hlo.index("\nENTRY "):]


ON = pytest.mark.skipif(jax.default_backend() != "cpu" or os.environ.get(xla_flags.OFF_VARIABLE, "1").strip() == "0",
                        reason="the options concern XLA's CPU backend, and were not turned off")


@ON
def test_this_process_runs_with_the_options_and_a_small_loop_compiles_whole():
    assert "xla_cpu_small_while_loop_byte_threshold" in os.environ.get("XLA_FLAGS", "")
    assert "--xla_backend_optimization_level=" in os.environ.get("XLA_FLAGS", "")

    def f(x):  # 3x3 products and a reduction: beyond XLA's default byte threshold
        def body(c):
            i, x = c
            return i + 1, jnp.tanh(x @ x.T) + 1e-3 * jnp.sum(x)
        return jax.lax.while_loop(lambda c: c[0] < 10, body, (0, x))[1]

    hlo = jax.jit(f).lower(jnp.ones((3, 3))).compile().as_text()
    assert SMALL_CALL in hlo
    assert not re.search(r"\) while\(", _entry(hlo))  # `%w = (tuple type) while(...)`


@ON
def test_the_contact_time_loop_of_one_scenario_compiles_whole():
    """The offset example (two vehicles, MEDUSA law, superellipsoid contact): no while loop is
    left for the thunk runtime in the entry computation, and no YNNPACK fusion anywhere."""
    scenario, _ = load_scenario(EXAMPLES / "offset" / "scenario.toml")
    settings = Settings(end_time=0.01, contact_geometry="superellipsoid")
    batch, state = build_batch([scenario], dt=settings.dt)
    hlo = simulate.lower(batch, state, settings, record=False).compile().as_text()
    assert "__ynn_fusion" not in hlo
    assert SMALL_CALL in _entry(hlo)
    assert not re.search(r"\) while\(", _entry(hlo))  # `%w = (tuple type) while(...)`
    # Compiled whole is not enough: XLA may copy an elementwise producer into every consumer.
    # The box test (contact/broad_phase.py, boxes_overlap) takes 105 abs operations (15 axes, 7
    # each); with its mask selected outside a conditional it was copied into each result leaf's
    # consumers, 2,340 abs in the contact geometry's scope and steps 4x slower (135 without).
    abs_ops = re.findall(r"= \S+ abs\(.*op_name=\"[^\"]*contact_geometry", hlo)
    assert len(abs_ops) < 4 * 105, len(abs_ops)
