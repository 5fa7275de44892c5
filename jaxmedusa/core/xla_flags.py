"""XLA options for the CPU that jaxmedusa sets before JAX starts its backend.

Why: XLA's CPU runtime runs a compiled while loop one operation ("thunk") at a time, and
above 512 bytes per buffer it hands them to a thread pool: a fixed cost per operation and
per iteration. A MEDUSA step of two vehicles is a few hundred small operations (3x3
matrices, four tires, one contact pair), so the time loop was dispatch-bound: the offset
example's 61,101 steps took 0.9 s with no in-run tracker and 2.5 s with the three that
`jaxmedusa run` carries. XLA can instead compile a whole while loop into one function (its
"small while loop hoisting" pass, xla/service/cpu/small_while_loop_hoisting_pass.cc), but by
default only for loops whose iteration touches very few bytes, and never for a loop that
contains a custom call, scatter, sort or a YNNPACK fusion. Two options lift that:

  * `xla_cpu_small_while_loop_byte_threshold` (an `xla_backend_extra_options` entry) =
    SMALL_LOOP_BYTES: every loop whose one iteration touches less is compiled whole;
  * `--xla_cpu_experimental_ynn_fusion_type=` (empty): no YNNPACK fusions, which XLA forms
    for small float64 matrix products (a [15, 3] x [3, 3] product of the broad phase) and
    which would keep the time loop on the thunk runtime.

With both the offset example's compiled run takes 0.3 s, trackers included
(benchmarks/RESULTS.md, "The time loop compiled whole"). Loops that still hold a scatter, sort or custom call
(e.g. a batched contact stage that compacts pairs, LAPACK calls) keep the thunk runtime.

A loop compiled whole is one LLVM function of tens of thousands of lines, and LLVM's full
unrolling of its many small loops (XLA's loops over a vehicle's 3 coordinates, a pair's 2
bodies, a car's 4 wheels) costs time that grows faster than the function: each unrolled loop
makes ScalarEvolution forget what it knew of the loop's users (ScalarEvolution::forgetLoop,
a quarter of a contact study's compile in a `perf` profile). The third entry,
LLVM's `-unroll-full-max-count` = FULL_UNROLL_MAX (XLA hands `xla_backend_extra_options`
entries that do not start with "xla_" to LLVM's option parser), unrolls loops of at most
that many iterations only (3: a vector's coordinates, not a car's four wheels). Measured on
the crush-law offset study: its XLA compile takes 13-15 % less, a free-driving step 28-50 %
and a step with contact 3-37 % less time (batch 16-256); free driving is rounded
differently (by at most 3.5e-13 relative), as any change of generated code
(benchmarks/RESULTS.md, "LLVM's full unrolling"). Like the YNNPACK option it is set for
jaxlib 0.10 only: LLVM aborts the process on an option it does not know.

The fourth, `--xla_backend_optimization_level` = OPT_LEVEL (1; XLA's default is 3), is the
level of LLVM's optimisation pipeline for the generated code. Most of a first call is that
pipeline (a contact program's loop, compiled whole, is one LLVM function of ~45,000 lines
after optimisation), and level 1 skips its costliest passes while the loop's code runs as fast:
first calls 10-30 % shorter (the crush-law study at B = 16-256, the default example, MEDUSA's
own contact search), runs the same within the machine's spread, free driving the same bits;
with contact the narrow phase rounds differently, which a collision amplifies as any change
of generated code (benchmarks/RESULTS.md, "LLVM's optimisation level"). XLA applies it to
every backend; on an NVIDIA H200 the offset study gave the same bits at levels 1 and 3
(RESULTS.md, "GPU: command buffers"). Level 0 compiles a contact loop 4.7x as fast but runs
it 5.5-10x as slowly: a loss for every run longer than about a second and for every call the
caches serve (RESULTS.md, "Compile against run").

XLA reads XLA_FLAGS once, when JAX starts its backend (the first computation), so `apply`
runs when jaxmedusa is imported; a process that computed with JAX before importing
jaxmedusa keeps its own options. Options the user already gives in XLA_FLAGS win.
JAXMEDUSA_XLA_FLAGS=0 turns this off. The YNNPACK option is set for jaxlib 0.10 only (where
it was checked): XLA aborts the process on an unknown flag, so a later jaxlib that renamed it
must be checked first (tests/core/test_xla_flags.py fails until then).

Both cores: a compiled loop runs on one thread, so one process uses one core.
JAXMEDUSA_CPU_DEVICES=N (N >= 2) adds `--xla_force_host_platform_device_count=N`: the
process then has N CPU devices, and the study runner shards each chunk's batch axis over
them (study/runner.py). Off by default: it changes the device count of everything the
process runs, and a split chunk's outcomes are not those of one device to the bit (within
about 1e-5 relative after a collision; benchmarks/two_cores.py measures both).
"""
from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version

__all__ = ["apply", "SMALL_LOOP_BYTES", "FULL_UNROLL_MAX", "OPT_LEVEL", "OFF_VARIABLE", "DEVICES_VARIABLE"]

SMALL_LOOP_BYTES = 1 << 30  # [bytes] per loop iteration: every loop jaxmedusa compiles
OFF_VARIABLE = "JAXMEDUSA_XLA_FLAGS"
DEVICES_VARIABLE = "JAXMEDUSA_CPU_DEVICES"  # CPU devices of the process (module docstring)
DEVICES_FLAG = "--xla_force_host_platform_device_count"
SMALL_LOOP_OPTION = "xla_cpu_small_while_loop_byte_threshold"
FULL_UNROLL_OPTION = "-unroll-full-max-count"  # an LLVM option (module docstring)
FULL_UNROLL_MAX = 3  # [iterations] the longest loop LLVM unrolls fully
YNN_FLAG = "--xla_cpu_experimental_ynn_fusion_type"
OPT_LEVEL_FLAG = "--xla_backend_optimization_level"
OPT_LEVEL = 1  # LLVM's optimisation level for the generated code (module docstring)
CHECKED_JAXLIB = (0, 10)  # (major, minor) of the jaxlib whose flags were checked


def _jaxlib_minor() -> tuple[int, int] | None:
    try:
        major, minor = version("jaxlib").split(".")[:2]
        return int(major), int(minor)
    except (PackageNotFoundError, ValueError):
        return None


def apply(environ=os.environ) -> str:
    """Add jaxmedusa's options to environ["XLA_FLAGS"] (module docstring); returns the value.
    An option the user already set (its name appears in XLA_FLAGS) is left as it is."""
    flags = environ.get("XLA_FLAGS", "")
    if environ.get(OFF_VARIABLE, "1").strip() == "0":
        return flags
    added = []
    checked = _jaxlib_minor() == CHECKED_JAXLIB  # options an unknown jaxlib might abort on
    if "xla_backend_extra_options" not in flags:  # one map: the user's entries replace ours
        entries = [f"{SMALL_LOOP_OPTION}={SMALL_LOOP_BYTES}"]
        if checked:
            entries.append(f"{FULL_UNROLL_OPTION}={FULL_UNROLL_MAX}")
        added.append("--xla_backend_extra_options=" + ",".join(entries))
    if YNN_FLAG not in flags and checked:
        added.append(f"{YNN_FLAG}=")
    if OPT_LEVEL_FLAG not in flags:
        added.append(f"{OPT_LEVEL_FLAG}={OPT_LEVEL}")
    devices = environ.get(DEVICES_VARIABLE, "").strip()
    if devices.isdigit() and int(devices) >= 2 and DEVICES_FLAG not in flags:
        added.append(f"{DEVICES_FLAG}={int(devices)}")
    if added:
        environ["XLA_FLAGS"] = " ".join([flags, *added]).strip()
    return environ.get("XLA_FLAGS", "")
