"""The backends generated code runs on, as data: how close its tests' results must
be there, and how its gradients are checked.

Generated test modules carry these tables and read the row of
`jax.default_backend()` when they run, so the same file passes on each backend
without a check switched off. A backend without a `float64` row checks
gradients in float32 even where jax_enable_x64 is on. Which `jaxmap new` kinds
a backend can run is each kind's own row (`knowledge.rungs.Kind.backends`).
"""

from __future__ import annotations

BACKENDS: tuple[str, ...] = ("cpu", "gpu", "tpu")

# Backend -> dtype -> (rtol, atol) for comparing results. On a TPU v5e (jax
# 0.10.2) float32 log1p and softplus were up to 2.6e-4 of the value from NumPy's
# float64, exp and the sigmoid 5e-6 (a CPU: 3e-7), so its float32 row is looser;
# its float64 was within 2e-14. The GPU rows are the CPU's until measured on one.
TOLERANCES: dict[str, dict[str, tuple[float, float]]] = {
    "cpu": {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)},
    "gpu": {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)},
    "tpu": {"float32": (5e-4, 2e-5), "float64": (1e-12, 1e-12)},
}

# Backend -> dtype -> (eps, tolerance) for `check_grads`: the finite-difference
# step and its rtol and atol. On a CPU these are check_grads' own defaults. On a
# TPU, float32 noise of 1e-5 to 1e-4 divided by the default step of 1e-4 swamps
# the difference quotient; a step of 1e-2 keeps that noise near 1e-3 and the
# central difference's own error near 1e-4.
GRAD_CHECKS: dict[str, dict[str, tuple[float, float]]] = {
    "cpu": {"float32": (1e-4, 2e-3), "float64": (1e-4, 1e-5)},
    "gpu": {"float32": (1e-4, 2e-3), "float64": (1e-4, 1e-5)},
    "tpu": {"float32": (1e-2, 2e-2), "float64": (1e-4, 1e-5)},
}
