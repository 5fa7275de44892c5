"""Wall and CPU time of one scenario as `jaxmedusa run` runs it: the report's offset example.

    python benchmarks/run_speed.py [--scenario studies/medusa/default.toml] [--end-time 3]
                                   [--law medusa|physical] [--geometry superellipsoid|medusa_search]
                                   [--step-control medusa|constant] [--dt 5e-5] [--repeats 1]
                                   [--compile-cache DIR] [--json out.json]

Times `jaxmedusa.run.run_scenario` (no tables written) in this process: the first call
(compile + run), then `--repeats` further calls (run only, the compiled program reused), and
the process's start (imports). With --compile-cache DIR the persistent compilation cache is
on in DIR: run the script twice to see a second process load the program instead of
compiling it. Prints one JSON line: wall and CPU seconds of each phase, steps, simulated
seconds per wall second (real-time factor), and the load average at start and end (this
machine is shared: compare runs only when the load was similar).
To time another version of the code, put its folder first on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

T_START = time.perf_counter()
C_START = time.process_time()

import jax  # noqa: E402

import jaxmedusa  # noqa: E402
import jaxmedusa.run as R  # noqa: E402
from jaxmedusa.core.compile_cache import enable as enable_compile_cache  # noqa: E402
from jaxmedusa.run import run_scenario  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # default.toml: the offset example on the superellipsoid shape (the folder alone runs the
    # MEDUSA law's default shape, medusa_search, since 2026-11-24)
    ap.add_argument("--scenario", default=os.path.join(ROOT, "studies", "medusa", "default.toml"))
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--dt", type=float, default=None)
    ap.add_argument("--law", default=None, help="contact law (default: the scenario's)")
    ap.add_argument("--geometry", default=None, help="contact shape (default: the scenario's)")
    ap.add_argument("--step-control", default=None)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--compile-cache", default=None, help="folder of the persistent compilation cache (off if unset)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.compile_cache:
        enable_compile_cache(a.compile_cache, respect_env=False)  # as the CLI does
    load0 = os.getloadavg()[0]
    imports = dict(wall=time.perf_counter() - T_START, cpu=time.process_time() - C_START)
    patch = {k: v for k, v in (("contact_law", a.law), ("contact_geometry", a.geometry),
                               ("step_control", a.step_control)) if v is not None}
    if patch:  # the settings of the scenario file, with the law / control replaced
        make = R.make_settings
        R.make_settings = lambda cfg, **kw: dataclasses.replace(make(cfg, **kw), **patch)
    runs = []
    for _ in range(1 + a.repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = run_scenario(a.scenario, end_time=a.end_time, dt=a.dt, out_root=None)
        runs.append(dict(wall=time.perf_counter() - w0, cpu=time.process_time() - c0,
                         steps=int(out.result.final.clock.steps[0]), status=int(out.result.final.clock.status[0])))
    best = min(runs[1:], key=lambda r: r["wall"]) if a.repeats else None
    res = dict(version=jaxmedusa.__file__, law=out.settings.contact_law, geometry=out.settings.contact_geometry,
               step_control=out.settings.step_control,
               dt=out.settings.dt, end_time=a.end_time, device=str(jax.devices()[0]), imports=imports,
               first=runs[0], best_rerun=best, compile_wall_est=runs[0]["wall"] - (best["wall"] if best else 0.0),
               user_wall=imports["wall"] + runs[0]["wall"],
               realtime_factor_user=a.end_time / (imports["wall"] + runs[0]["wall"]),
               realtime_factor_compiled=(a.end_time / best["wall"]) if best else None,
               load=[load0, os.getloadavg()[0]])
    print(json.dumps(res), flush=True)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
