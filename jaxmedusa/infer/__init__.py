"""Bayesian reconstruction: posteriors of the fit's unknowns by NUTS through the simulator.

    from jaxmedusa.infer import load_infer, run_inference
    spec = load_infer("studies/infer_offset_brake.toml")
    result = run_inference(spec)            # draws of every chain, ArviZ summary

priors.py (prior families, their densities and maps onto R), spec.py (the inference file:
a fit file with priors, nuisance parameters and [infer] options), model.py (the simulator
as a function of the unknowns and the nuisance parameters), likelihood.py (normal or
Student-t observation noise), posterior.py (the log density in unconstrained coordinates;
forward- or reverse-mode gradient), sampler.py (BlackJAX NUTS with window adaptation,
chains vmapped), run.py (starts, the sampling loop, the result), tables.py
(posterior.parquet, summary.parquet). docs/inference.md describes the method.
"""
from jaxmedusa.infer.posterior import FORWARD_MAX_UNKNOWNS, LogPosterior, choose_gradient
from jaxmedusa.infer.priors import FAMILIES, Prior, parse_prior
from jaxmedusa.infer.run import InferResult, run_inference
from jaxmedusa.infer.spec import InferOptions, InferSpec, infer_from_dict, load_infer

__all__ = ["Prior", "FAMILIES", "parse_prior", "InferSpec", "InferOptions", "load_infer", "infer_from_dict",
           "LogPosterior", "choose_gradient", "FORWARD_MAX_UNKNOWNS", "InferResult", "run_inference"]
