"""Studies: perturbed copies of a base scenario, sampled, run in chunks, written as Parquet.

    from jaxmedusa.study import load_study, run_study
    study = load_study("studies/offset.toml")
    summary = run_study(study, out="results/offset", batch=256)   # -> results/offset/scenarios.parquet

spec.py (the Study and its parts), parse.py (the study file format, validated key by key),
design.py (SAMPLERS: grid, random, lhs, sobol), perturb.py (the scenario of one sample),
runner.py (chunks, devices, progress) and store.py (chunk files, resume, finalize, merge).
The format is described in parse.py and docs/studies.md.
"""
from jaxmedusa.study.design import SAMPLERS, design, unit_design
from jaxmedusa.study.parse import load_study, parse_target, study_from_dict
from jaxmedusa.study.perturb import scenario_for, scenarios_for
from jaxmedusa.study.runner import SweepSummary, auto_batch_size, parse_shard, run_chunk, run_study
from jaxmedusa.study.spec import (METRIC_GROUPS, Distribution, Outputs, Parameter, Sampler, Study, StudyError,
                                  Target)
from jaxmedusa.study.store import finalize, merge_results

__all__ = ["Study", "Parameter", "Distribution", "Target", "Sampler", "Outputs", "SweepSummary", "load_study",
           "study_from_dict", "parse_target", "design", "unit_design", "SAMPLERS", "scenario_for", "scenarios_for",
           "run_study", "run_chunk", "merge_results", "finalize", "parse_shard", "auto_batch_size", "METRIC_GROUPS",
           "StudyError"]
