"""A sweep split over two CPU devices (JAXMEDUSA_CPU_DEVICES=2: each device runs its own
loop on half of every chunk, study/runner.py) writes the rows of a one-device sweep in chunks
of half the size, bit for bit: each device runs the very program of a half-size chunk.
(Against one device with the whole chunk the rows differ in the last bits: XLA's CPU code
for a batch of 4 and of 2 rounds differently, which is why a study's fingerprint includes
its chunk size; a collision then amplifies the difference. benchmarks/two_cores.py gives
its size.)

Slow: a subprocess (the device count is fixed when JAX starts) compiles the crush-law loop
for 2 scenarios on one device and on each of two (about 60 s on an idle machine).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import jax
    sys.path.insert(0, sys.argv[1])
    from sweep_helpers import rows_equal, small_offset, study, table
    from jaxmedusa.study import run_study
    out = Path(sys.argv[2])
    data = small_offset(n=4, end_time=0.6, batch=2)
    data["simulation"]["contact"] = True  # the crush law at its study step: the contact stage's compaction too
    del data["simulation"]["dt"]
    st = study(data)
    one = run_study(st, out=out / "one", progress=False, n_devices=1)  # two chunks of 2
    two = run_study(st, out=out / "two", progress=False, batch=4, n_devices=2)  # one chunk, 2 per device
    a, b = table(out / "one"), table(out / "two")
    print(json.dumps(dict(devices=jax.local_device_count(), same=rows_equal(a, b), rows=a.num_rows,
                          contact=int(sum(x > 0 for x in a.column("v1_contact_duration").to_pylist())),
                          chunks=[one.n_chunks, two.n_chunks])))
""")


@pytest.mark.slow
def test_two_devices_write_the_rows_of_one(tmp_path):
    env = {**os.environ, "JAXMEDUSA_CPU_DEVICES": "2"}
    env.pop("XLA_FLAGS", None)  # this process's options (and device count) are jaxmedusa's own again
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(HERE), str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["devices"] == 2 and got["rows"] == 4 and got["chunks"] == [2, 1]
    assert got["contact"] >= 1  # some pair collided: the contact stage ran on both devices
    assert got["same"]
