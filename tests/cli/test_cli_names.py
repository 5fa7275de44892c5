"""Unknown names in files fail before any computation, with exit code 2 and a message that
names the file, the key and the valid names (the registries)."""
from __future__ import annotations

from typer.testing import CliRunner

from jaxmedusa_cli.app import app


def test_study_with_an_unknown_contact_law_exits_2(tmp_path, examples):
    study = tmp_path / "bad.toml"
    study.write_text(f'''
[scenario]
path = "{(examples / "offset").as_posix()}"
[simulation]
contact_law = "soft"
[sampler]
kind = "random"
n = 2
[parameters]
"vehicles.2.y" = {{ uniform = [-1.0, 1.0] }}
''')
    res = CliRunner().invoke(app, ["sweep", str(study), "--out", str(tmp_path / "out"), "--no-progress"])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "bad.toml" in out and "simulation.contact_law" in out and "unknown contact law 'soft'" in out
    assert "valid: medusa, physical" in out and "Traceback" not in out
    assert not (tmp_path / "out").exists()  # nothing ran


def test_scenario_with_an_unknown_step_control_or_tire_model_exits_2(tmp_path, examples):
    for table, key, text in (("[simulation]\nstep_control = \"pi\"\n", "simulation.step_control",
                              "valid: medusa, constant"),
                             ("[overrides.models.1]\ntire_model = \"michelin\"\n", "overrides.models.1.tire_model",
                              "valid: calspan")):
        scen = tmp_path / "scenario.toml"
        scen.write_text(f'[medusa]\nfolder = "{(examples / "straight").as_posix()}"\n' + table)
        res = CliRunner().invoke(app, ["run", str(scen), "-t", "0.01", "--out", str(tmp_path)])
        out = " ".join(res.output.split())
        assert res.exit_code == 2 and key in out and text in out, res.output
