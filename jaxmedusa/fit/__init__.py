"""Reconstruction by gradients: fit unknown scenario values to observed outcomes.

    from jaxmedusa.fit import FitProblem, load_fit, solve_fit, write_fit
    spec = load_fit("studies/fit_offset.toml")
    result = solve_fit(FitProblem(spec))

spec.py (the fit file, validated key by key), observe.py (states at the observation times,
captured inside the run), problem.py (residuals as a differentiable function of the
unknowns; bounds by a smooth map), solve.py (optimistix Levenberg-Marquardt over vmapped
starts; Gauss-Newton covariance), tables.py (fit, starts and residual tables). The format
and the method are described in spec.py and docs/fit.md.
"""
from jaxmedusa.fit.problem import FAILED_RESIDUAL, FitProblem
from jaxmedusa.fit.solve import FitResult, draw_starts, solve_fit, with_forward_jacobian
from jaxmedusa.fit.spec import QUANTITIES, FitError, FitOptions, FitSpec, Observation, Unknown, fit_from_dict, load_fit

__all__ = ["FitSpec", "Unknown", "Observation", "FitOptions", "FitError", "QUANTITIES", "load_fit", "fit_from_dict",
           "FitProblem", "FAILED_RESIDUAL", "FitResult", "solve_fit", "draw_starts", "with_forward_jacobian"]
