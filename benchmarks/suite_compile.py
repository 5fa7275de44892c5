"""How much of the test suite is XLA compiling: per test, its wall time and its time in XLA's backend compile.

    python benchmarks/suite_compile.py                  # the default suite, as README runs it (-n 2)
    python benchmarks/suite_compile.py tests/contact    # any pytest arguments

Runs pytest with this module as a plugin (`-p suite_compile`), which wraps JAX's
`backend_compile_and_load` (the XLA compile of one program; a hit in the persistent
compilation cache skips it) with a timer in every worker, and records per test its wall time
(setup, call and teardown), the compile seconds within it and the number of compiles. Prints
the totals and the tests with the most time outside compiling (tracing, running, eager
operations, subprocesses): where a test's time is not its programs' compile, a cheaper way to
the same check may exist. A test in a subprocess (CLI, Ctrl-C, Ray, two-device tests) shows
no compile of its own: its child's is not seen here.

Then the programs that took at least PROGRAM_SECONDS to compile, grouped by name: a name
compiled as several different programs (other shapes, static settings or code) in one run
is where tests could share one program (the run's compilation cache serves a program
compiled before, in any worker, only when it is the same).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROWS_DIR = "JAXMEDUSA_SUITE_COMPILE_ROWS"  # the folder where each pytest process writes its rows
PROGRAM_SECONDS = 2.0  # [s] compiles at least this long are listed one by one

_compile = {"seconds": 0.0, "count": 0, "test": None}
_rows: list[dict] = []
_programs: list[dict] = []


def _describe(module) -> tuple[str, str, str]:
    """(name, a digest of the program's text, its main function's signature) of an MLIR module."""
    text = str(module)
    name = str(module.operation.attributes["sym_name"]).strip('"')
    start = text.find("func.func public @main")
    signature = text[start:text.find("{", start)] if start >= 0 else ""
    return name, hashlib.sha1(text.encode()).hexdigest()[:10], " ".join(signature.split())[:300]


def install_compile_timer(min_seconds: float = PROGRAM_SECONDS) -> list[dict]:
    """Time every XLA compile of this process (JAX's `backend_compile_and_load`) into the
    totals; returns the list that collects each compile of at least `min_seconds`: {test,
    name, seconds, digest, signature} (benchmarks/hlo_scopes.py reads it too)."""
    from jax._src import compiler

    original = compiler.backend_compile_and_load

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - t0
            _compile["seconds"] += seconds
            _compile["count"] += 1
            if seconds >= min_seconds:
                name, digest, signature = _describe(args[1])
                _programs.append(dict(test=_compile["test"], name=name, seconds=seconds, digest=digest,
                                      signature=signature))

    compiler.backend_compile_and_load = timed
    return _programs


def pytest_configure(config) -> None:
    if os.environ.get(ROWS_DIR):
        install_compile_timer()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t0 = time.perf_counter()
    s0, n0 = _compile["seconds"], _compile["count"]
    _compile["test"] = item.nodeid.split("@")[0]
    yield
    _rows.append(dict(test=item.nodeid, wall=time.perf_counter() - t0, compile=_compile["seconds"] - s0,
                      compiles=_compile["count"] - n0))


def pytest_sessionfinish(session) -> None:
    folder = os.environ.get(ROWS_DIR)
    if folder and _rows:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder, f"{worker}.json").write_text(json.dumps(_rows))
        Path(folder, f"{worker}.programs").write_text(json.dumps(_programs))


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv) or ["-n", "2", "-q"]
    folder = tempfile.mkdtemp(prefix="suite-compile-")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parent),
                                                        os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    env[ROWS_DIR] = folder
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_compile", "-p", "no:cacheprovider", *argv],
                          cwd=ROOT, env=env)
    wall = time.perf_counter() - t0
    rows = [r for f in Path(folder).glob("*.json") for r in json.loads(f.read_text())]
    total = sum(r["wall"] for r in rows)
    compiled = sum(r["compile"] for r in rows)
    print(f"\npytest exit {proc.returncode}, {wall:.0f} s wall; {len(rows)} tests, {total:.0f} test-seconds, "
          f"{compiled:.0f} s ({100 * compiled / max(total, 1e-9):.0f} %) in {sum(r['compiles'] for r in rows)} "
          "XLA compiles\n")
    print("| test | wall [s] | compile [s] | compiles | outside compiling [s] |")
    print("|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: r["wall"] - r["compile"], reverse=True)[:25]:
        print(f"| {r['test'].split('@')[0]} | {r['wall']:.1f} | {r['compile']:.1f} | {r['compiles']} | "
              f"{r['wall'] - r['compile']:.1f} |")
    programs = [p for f in Path(folder).glob("*.programs") for p in json.loads(f.read_text())]
    names: dict[str, list[dict]] = {}
    for p in programs:
        names.setdefault(p["name"], []).append(p)
    print(f"\n{len(programs)} compiles of at least {PROGRAM_SECONDS:g} s, {sum(p['seconds'] for p in programs):.0f} s; "
          "per name (the different programs, their compiles and seconds, the tests):\n")
    print("| name | programs | compiles | compile [s] | tests |")
    print("|---|---|---|---|---|")
    for name, ps in sorted(names.items(), key=lambda kv: -sum(p["seconds"] for p in kv[1])):
        tests = sorted({p["test"].split("::")[-1] for p in ps})
        print(f"| {name} | {len({p['digest'] for p in ps})} | {len(ps)} | {sum(p['seconds'] for p in ps):.0f} | "
              f"{'; '.join(tests)[:400]} |")
    Path(folder, "programs.json").write_text(json.dumps(programs, indent=1))
    print(f"\nevery such compile, with its signature: {folder}/programs.json")


if __name__ == "__main__":
    main()
