"""A small contact run shared by the picture tests: the report's offset collision brought
close (vehicle 2 starts 4.1 m ahead instead of 6 m), 0.15 s, saved every 0.01 s."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/conftest.py (module "conftest")
from conftest import EXAMPLES  # noqa: E402

END_TIME = 0.15  # [s]: contact begins near 0.06 s (bounding spheres meet at dx = sqrt(16 - 0.16) m)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    from jaxmedusa.run import run_scenario

    root = tmp_path_factory.mktemp("run")
    toml = root / "close.toml"
    toml.write_text(f'name = "close"\n[medusa]\nfolder = "{EXAMPLES / "offset"}"\n[road]\nflat = true\n'
                    '[overrides.vehicles.2]\nx = 4.1\n')
    out = run_scenario(toml, end_time=END_TIME, save_every=0.01, out_root=root / "results",
                       contact_geometry="superellipsoid")  # compiles in seconds (medusa_search ~40 s)
    return out.out_dir
