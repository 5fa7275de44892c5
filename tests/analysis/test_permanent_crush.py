"""residual_crush is the permanent crush a vehicle's last force-carrying contact left
(analysis/outcomes.py, docs/crash-law.md "Crash outputs"): once the pair has parted, the law's
terms of the apart pair (whose face weighting follows whatever normal the pair then has, or
none) must not change it."""
import dataclasses
from pathlib import Path

from jaxmedusa import study as S


def test_the_permanent_crush_is_what_the_last_contact_left():
    """The crush-law offset study's row with lateral offset -1.22 m and 7.96 m/s closing speed
    (its sample 49): the cars part at 0.5 s; the striking car's residual_crush at 1 s and at 3 s
    is the same number, a few centimetres and below its largest crush. (Taken from every
    accepted step, it followed the face weighting of the apart pair's normal: 3.896 mm at 1 s,
    3.890 mm at 3 s, against 30.6 mm at the last contact.)"""
    st = S.load_study(Path(__file__).resolve().parents[2] / "studies" / "offset.toml")
    items = [S.scenario_for(st, {"lateral_offset": -1.2182755380868913, "speed_difference": 7.956246032379568})]
    out = {}
    for end in (1.0, 3.0):
        st.settings = dataclasses.replace(st.settings, end_time=end)
        m = S.run_chunk(st, items)[0]
        out[end] = (float(m["residual_crush"][0, 0]), float(m["max_crush"][0, 0]), float(m["last_contact_time"][0, 0]))
    (r1, _, t1), (r3, c3, t3) = out[1.0], out[3.0]
    assert t1 == t3 < 0.6  # no contact after 0.6 s
    assert r1 == r3  # the same run up to 1 s, and nothing may change the permanent crush after it
    assert 0.01 < r3 < c3
