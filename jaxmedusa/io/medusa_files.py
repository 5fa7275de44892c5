"""MEDUSA's input files: model.dat, platoon.dat and road.dat (report section 2.2, init.c).

The readers follow init.c `read_models()`, `read_vehicles()` and `road_init()`: a fixed
sequence of keywords, each followed by a number, compared case-insensitively; `%` starts
a comment that runs to the end of the line; any whitespace separates tokens. Unlike
MEDUSA, which reads numbers with `atof()` (so `MASS abc` silently gives 0) and checks
road.dat keywords by their length only, these readers check every token and raise
`MedusaInputError` naming the file, the 1-based line, the token found and what was
expected. They also reject physically impossible values (`model_problems`).

Units are those of the files: SI, angles in degrees (see `scenario.py`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from jaxmedusa.core.scenario import (KEYWORD_FIELDS, MODEL_KEYWORDS, DriverTable, ModelSpec, RoadSpec, Scenario,
                                     VehicleSpec, model_problems)

__all__ = [
    "MedusaInputError",
    "read_models",
    "read_platoon",
    "read_road",
    "read_medusa_folder",
    "model_problems",
    "write_model_block",
    "write_models",
    "write_platoon",
    "write_road",
    "MODEL_KEYWORDS",
    "KEYWORD_FIELDS",
]


class MedusaInputError(ValueError):
    """A jaxmedusa input file (MEDUSA .dat file or scenario TOML) is malformed or impossible.

    The message names the file, the line (where known), the token found and what was
    expected.
    """


# C `atof()` number syntax (what MEDUSA accepts), without inf/nan: 1, -2., .5, 600.0e6.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


# ---------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Token:
    text: str
    line: int  # 1-based line in the original file


class _Tokens:
    """Whitespace-separated tokens of a file, with `%` comments removed (init.c `read_file()`)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise MedusaInputError(f"{self.path}: cannot open file ({e.strerror})") from None
        lines = text.splitlines()
        self.last_line = max(1, len(lines))
        self.tokens = [
            _Token(word, n)
            for n, line in enumerate(lines, start=1)
            for word in line.split("%", 1)[0].split()
        ]
        self.i = 0

    def fail(self, line: int, message: str):
        raise MedusaInputError(f"{self.path}, line {line}: {message}")

    def next(self, expected: str, where: str = "") -> _Token:
        """The next token; at end of file, an error saying `expected` was expected."""
        if self.i >= len(self.tokens):
            self.fail(self.last_line, f"unexpected end of file{where}. {expected} expected.")
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def keyword(self, keyword: str, where: str = "") -> _Token:
        """Consume `keyword` (case-insensitive); `where` (e.g. ' in model 2') goes into errors."""
        tok = self.next(keyword, where)
        if tok.text.upper() != keyword:
            self.fail(tok.line, f"unexpected token '{tok.text}'{where}. {keyword} expected.")
        return tok

    def number(self, what: str, where: str = "") -> tuple[float, int]:
        """A finite number in C `atof()` syntax and its line; `what` names it in errors."""
        tok = self.next(what, where)
        if _NUMBER.fullmatch(tok.text):
            value = float(tok.text)
        else:
            try:
                value = float(tok.text)
            except ValueError:
                value = None
            if value is None or math.isfinite(value):  # not a C number (also '1_000')
                self.fail(tok.line, f"unexpected token '{tok.text}'{where}. {what} expected.")
        if not math.isfinite(value):
            self.fail(tok.line, f"'{tok.text}'{where} is not a finite number. {what} expected.")
        return value, tok.line

    def expr(self, keyword: str, where: str = "") -> tuple[float, int]:
        """init.c `read_expr()`: KEYWORD followed by its number. Returns (value, line)."""
        self.keyword(keyword, where)
        return self.number(f"A number (the value of {keyword})", where)

    def count(self, keyword: str, minimum: int, noun: str) -> tuple[int, int]:
        """KEYWORD followed by a whole number >= minimum (NUMBER_OF_MODELS etc.)."""
        value, line = self.expr(keyword)
        return self.whole(value, line, keyword, minimum, noun), line

    def whole(self, value: float, line: int, keyword: str, minimum: int, noun: str) -> int:
        if value != int(value):
            self.fail(line, f"{keyword} {value:g} is not a whole number. A {noun} expected.")
        if value < minimum:
            self.fail(line, f"{keyword} {value:g} is too small. At least {minimum} expected.")
        return int(value)

    def end(self, after: str):
        """No tokens may follow the last expected one."""
        if self.i < len(self.tokens):
            tok = self.tokens[self.i]
            self.fail(tok.line, f"unexpected token '{tok.text}' after {after}. End of file expected.")


# ---------------------------------------------------------------------------- model.dat

# MODEL_KEYWORDS, KEYWORD_FIELDS and model_problems live with ModelSpec (core/scenario.py):
# the Python API, TOML files and these readers share one set of rules.

# Group keywords (no value) that precede the given value keyword.
_GROUPS = {"MASS": "COSSERAT_POINT", "L1": "SUSPENSION", "A1": "CONTACT", "R3": "EQUILIBRIUM"}


def read_models(path: str | Path) -> list[ModelSpec]:
    """Read a model.dat file (init.c `read_models()`): NUMBER_OF_MODELS m, then m MODEL blocks."""
    t = _Tokens(path)
    n_models, _ = t.count("NUMBER_OF_MODELS", 1, "number of models")
    models = []
    for k in range(1, n_models + 1):
        if t.i >= len(t.tokens):
            t.fail(
                t.last_line,
                f"unexpected end of file. MODEL {k} expected "
                f"(NUMBER_OF_MODELS announces {n_models} models, {k - 1} found).",
            )
        number, line = t.expr("MODEL")
        if number != k:
            t.fail(line, f"model number {number:g} out of sequence. MODEL {k} expected.")
        where = f" in model {k}"
        values: dict[str, float] = {}
        lines: dict[str, int] = {}
        t.keyword("COSSERAT_POINT", where)
        for kw, _ in MODEL_KEYWORDS:
            if kw in _GROUPS and kw != "MASS":
                t.keyword(_GROUPS[kw], where)
            values[kw], lines[kw] = t.expr(kw, where)
        model = ModelSpec(
            mass=values["MASS"],
            ix=values["IX"],
            iy=values["IY"],
            iz=values["IZ"],
            young=values["E"],
            nu=values["NU"],
            volume=values["VOLUME"],
            l1=values["L1"],
            l2=values["L2"],
            track=values["B"],
            h1=values["H1"],
            h2=values["H2"],
            spring_ref=values["SPRING_REF"],
            c1=values["C1"],
            c2=values["C2"],
            d1=values["D1"],
            d2=values["D2"],
            tire_lag=values["TIRE"],
            contact_dims=(values["A1"], values["A2"], values["A3"]),
            eq_r3=values["R3"],
            # init.c: init.F[j][i] = Dij, so the columns of F are the directors.
            eq_F=tuple(tuple(values[f"D{i}{j}"] for i in (1, 2, 3)) for j in (1, 2, 3)),
        )
        problems = model_problems(model)
        if problems:
            kw, reason = min(problems, key=lambda p: lines[p[0]])
            t.fail(lines[kw], f"{reason}{where}.")
        models.append(model)
    t.end(f"the last model (NUMBER_OF_MODELS {n_models})")
    return models


def _fmt(x: float) -> str:
    """Shortest text that reads back as the same float."""
    return repr(float(x))


def write_model_block(model: ModelSpec, number: int) -> str:
    """One MODEL block in model.dat syntax (read back exactly by `read_models`)."""
    m = model
    F = m.eq_F
    d = lambda i: "  ".join(f"D{i + 1}{j + 1} {_fmt(F[j][i])}" for j in range(3))  # noqa: E731
    a1, a2, a3 = m.contact_dims
    return "\n".join(
        [
            f"MODEL {int(number)}",
            " COSSERAT_POINT",
            f"  MASS {_fmt(m.mass)}  % mass [kg]",
            f"  IX {_fmt(m.ix)}  IY {_fmt(m.iy)}  IZ {_fmt(m.iz)}  % principal moments of inertia [kg m^2]",
            f"  E {_fmt(m.young)}  NU {_fmt(m.nu)}  VOLUME {_fmt(m.volume)}  % [N/m^2], [-], [m^3]",
            " SUSPENSION",
            f"  L1 {_fmt(m.l1)}  L2 {_fmt(m.l2)}  B {_fmt(m.track)}  H1 {_fmt(m.h1)}  H2 {_fmt(m.h2)}  % [m]",
            f"  SPRING_REF {_fmt(m.spring_ref)}  % unstretched spring length [m]",
            f"  C1 {_fmt(m.c1)}  C2 {_fmt(m.c2)}  % spring constants [N/m]",
            f"  D1 {_fmt(m.d1)}  D2 {_fmt(m.d2)}  % damping coefficients [N s/m]",
            f" TIRE {_fmt(m.tire_lag)}  % tire lag [s]",
            " CONTACT",
            f"  A1 {_fmt(a1)}  A2 {_fmt(a2)}  A3 {_fmt(a3)}  % length, width, height [m]",
            " EQUILIBRIUM",
            f"  R3 {_fmt(m.eq_r3)}  % height of the centre of mass [m]",
            f"  {d(0)}  % director 1 [-]",
            f"  {d(1)}  % director 2 [-]",
            f"  {d(2)}  % director 3 [-]",
            "",
        ]
    )


def write_models(models: list[ModelSpec]) -> str:
    """A whole model.dat: NUMBER_OF_MODELS and one block per model."""
    return f"NUMBER_OF_MODELS {len(models)}\n" + "".join(
        write_model_block(m, k) for k, m in enumerate(models, start=1)
    )


# ---------------------------------------------------------------------------- platoon.dat


def read_platoon(path: str | Path, n_models: int) -> list[VehicleSpec]:
    """Read a platoon.dat file (init.c `read_vehicles()`).

    `n_models` is the number of models in model.dat; VEHICLE_HAS_MODEL (1-based in the
    file) must lie in 1..n_models and is stored 0-based. TIRE_SPEED [m/s] and STEERING
    [deg] become one-knot constant DriverTables.
    """
    t = _Tokens(path)
    n_vehicles, _ = t.count("NUMBER_OF_VEHICLES", 1, "number of vehicles")
    vehicles = []
    for k in range(1, n_vehicles + 1):
        if t.i >= len(t.tokens):
            t.fail(
                t.last_line,
                f"unexpected end of file. VEHICLE_HAS_MODEL expected for vehicle {k} "
                f"(NUMBER_OF_VEHICLES announces {n_vehicles} vehicles, {k - 1} found).",
            )
        where = f" in vehicle {k}"
        model, line = t.expr("VEHICLE_HAS_MODEL", where)
        if model != int(model) or not 1 <= model <= n_models:
            t.fail(
                line,
                f"VEHICLE_HAS_MODEL {model:g}{where}: model {model:g} does not exist. "
                f"A model number 1..{n_models} expected.",
            )
        t.keyword("INITIALLY_WITH", where)
        v = {kw: t.expr(kw, where)[0] for kw in ("X", "Y", "ORIENTATION", "SPEED", "TIRE_SPEED", "STEERING")}
        vehicles.append(
            VehicleSpec(
                model=int(model) - 1,
                x=v["X"],
                y=v["Y"],
                orientation=v["ORIENTATION"],
                speed=v["SPEED"],
                tire_speed=DriverTable(times=(0.0,), values=(v["TIRE_SPEED"],), kind="constant"),
                steering=DriverTable(times=(0.0,), values=(v["STEERING"],), kind="constant"),
            )
        )
    t.end(f"the last vehicle (NUMBER_OF_VEHICLES {n_vehicles})")
    return vehicles


def _constant(table: DriverTable, what: str) -> float:
    if len(set(table.values)) != 1:
        raise ValueError(f"{what}: platoon.dat holds constants only, got a {len(table.values)}-knot table")
    return table.values[0]


def write_platoon(vehicles: list[VehicleSpec]) -> str:
    """platoon.dat text for vehicles with constant TIRE_SPEED and STEERING."""
    out = [f"NUMBER_OF_VEHICLES {len(vehicles)}"]
    for k, v in enumerate(vehicles, start=1):
        out += [
            f"% Vehicle {k}",
            f"VEHICLE_HAS_MODEL {v.model + 1} INITIALLY_WITH",
            f"  X {_fmt(v.x)}  % [m]",
            f"  Y {_fmt(v.y)}  % [m]",
            f"  ORIENTATION {_fmt(v.orientation)}  % [deg]",
            f"  SPEED {_fmt(v.speed)}  % [m/s]",
            f"  TIRE_SPEED {_fmt(_constant(v.tire_speed, f'vehicle {k} TIRE_SPEED'))}  % [m/s], 0 -> free rolling",
            f"  STEERING {_fmt(_constant(v.steering, f'vehicle {k} STEERING'))}  % [deg]",
        ]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- road.dat


def read_road(path: str | Path) -> RoadSpec:
    """Read a road.dat file (init.c `road_init()`).

    NUMBER_OF_POINTS: n (n >= 4), XYZ_COORDINATES_&_ANGLE:, n rows x y z [m] bank [deg],
    END_OF_FILE. MEDUSA checks only the keyword lengths (17, 24, 11); here the spelling is
    checked (case-insensitively). MEDUSA reads road.dat with fscanf, so it tolerates `%`
    comments only after END_OF_FILE; this reader accepts them anywhere. Consecutive
    points must differ and |bank| < 90 deg. A road whose points all lie in z = 0 with no
    banking is still returned with its points (the road code decides what to do).
    """
    t = _Tokens(path)
    n, _ = t.count("NUMBER_OF_POINTS:", 4, "number of road points (at least 4)")
    t.keyword("XYZ_COORDINATES_&_ANGLE:")
    points = []
    for k in range(1, n + 1):
        row = []
        for name in ("x", "y", "z", "banking angle"):
            value, line = t.number(f"A number (the {name} of road point {k} of {n})")
            row.append(value)
        if abs(row[3]) >= 90.0:
            t.fail(line, f"banking angle {row[3]:g} deg of road point {k} must lie in (-90, 90).")
        if points and tuple(row[:3]) == points[-1][:3]:
            t.fail(line, f"road point {k} repeats road point {k - 1}. Distinct points expected.")
        points.append(tuple(row))
    t.keyword("END_OF_FILE", f" after {n} road points")
    t.end("END_OF_FILE")
    return RoadSpec(points=tuple(points))


def write_road(road: RoadSpec) -> str:
    """road.dat text for a RoadSpec with points."""
    if road.points is None:
        raise ValueError("the ideal flat plane (points=None) has no road.dat form")
    rows = "".join(f"{_fmt(x)} {_fmt(y)} {_fmt(z)} {_fmt(b)}\n" for x, y, z, b in road.points)
    return f"NUMBER_OF_POINTS:\n{len(road.points)}\nXYZ_COORDINATES_&_ANGLE:\n{rows}END_OF_FILE\n"


# ---------------------------------------------------------------------------- folder


def read_medusa_folder(folder: str | Path, platoon: str = "platoon.dat") -> Scenario:
    """A Scenario from a folder holding model.dat, the platoon file and road.dat.

    The scenario is named after the folder.
    """
    folder = Path(folder)
    models = read_models(folder / "model.dat")
    vehicles = read_platoon(folder / platoon, len(models))
    road = read_road(folder / "road.dat")
    return Scenario(name=folder.resolve().name, models=models, vehicles=vehicles, road=road)
