r"""The per-prompt update of a binary prompt in logit space, vectorised over prompts: ``h(z; p)``.

A binary prompt is the two-class question ``pi_ref = (p, 1 - p)`` (:func:`~.response.binary_question`); its
policy is ``(x, 1 - x)`` with ``z = logit x``. The tabular flow of :func:`grpo_theory.dynamics.flow`,
``d theta_o/dt = pi(o) (g(o) - E_pi g)`` on the two class logits, moves ``z = theta_a - theta_b`` by

    dz/dt = h(z; p) = 2 x (1 - x) (g_a - g_b),

with ``g = output_gradient(q, obj, pi)`` the exact expected per-output update of the objective at
``pi_old = pi`` (every family member, KL placement and ``G`` the library supports). ``h`` is what a
prompt's own update does to its own logit; the shared-weights model (:mod:`.coupled`) mixes the ``h`` of
all prompts through a kernel.

Two ways to evaluate ``h`` for many prompts at once:

* **separable** (the KL in the loss or the advantage, no tie filtering, no entropy bonus): ``g_a - g_b =
  A(x) - beta (c_a - c_b)``, where ``A = P_G(a) - P_G(b)`` depends on ``x`` alone (checked at build time
  against two different ``p``) and the penalty's ``c`` is elementwise in ``log(x/p)`` and
  ``log((1 - x)/(1 - p))``. ``a(z) = 2 x (1 - x) A(x)`` is solved by the engine on a grid in ``z`` (step
  0.02 on ``[-40, 40]``) and interpolated by a cubic spline checked at every midpoint; the penalty part is
  exact (reverse KL: ``2 beta (p - x)``; direct: ``-2 beta x (1 - x) (z - logit p)``);
* **tabulated** (the KL in the reward, tie filtering, an entropy bonus): ``h`` from the engine on a grid
  in ``(logit p, z)``, interpolated by a bicubic spline; the largest error at cell midpoints is reported.
"""

from __future__ import annotations

import numpy as np

from .._checks import OBJECTIVE, arr, checked, index_below, indices, num, numbers, optional
from .. import advantage, kl
from .._numerics import expit, logit
from .._validate import float_array, number
from ..errors import InvalidInputError
from ..preference import reward_preference
from ..problem import Objective
from ..solvers import output_gradient
from .response import binary_question

__all__ = ["PromptField"]

Z_MAX = 40.0          # |z| beyond this: x (1 - x) < 5e-18, the update's reward part is read at the edge


def _engine_h(obj: Objective, p: float, z: np.ndarray) -> np.ndarray:
    """``h(z; p)`` from :func:`~grpo_theory.solvers.output_gradient`, one call per ``z`` (the independent path)."""
    q = binary_question(float(p))
    out = np.empty(z.size)
    for i, zz in enumerate(z):
        x, y = float(expit(zz)), float(expit(-zz))
        g = output_gradient(q, obj, np.array([x, y]))
        out[i] = 2.0 * x * y * (g[0] - g[1])
    return out


class PromptField:
    """``h(z; p)``, the update of a binary prompt's logit under the tabular flow, for arrays of prompts.

    Parameters
    ----------
    obj : Objective
        The GRPO objective (kept as the attribute ``objective``).
    p : array_like
        Each prompt's ``p_ref`` (the starting point of its flow and the reference of its KL), in ``(0, 1)``.
    z_step : float
        Grid step in ``z`` of the tabulated reward part (separable path) or of the whole ``h`` (tabulated path).
    tol : float
        Largest interpolation error of ``h`` allowed at a cell midpoint (separable path; reported, and
        checked by the test suite, on the tabulated path).

    Attributes
    ----------
    path : str
        ``"separable"`` or ``"tabulated"``.
    max_check_error : float
        The largest error of the interpolated part at the checked midpoints.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> f = PromptField(Objective(beta=1.0, group_size=2), [0.25])
    >>> x = 0.25 ** 0.5                       # Eq. 14: the stationary point of G = 2, beta = 1 is sqrt(p)
    >>> abs(float(f.h(np.log(x / (1 - x)))[0])) < 1e-6
    True
    """

    @checked(obj=OBJECTIVE, p=arr(ndim=(0, 1), finite=False), z_step=num(1e-4, 1.0), tol=num(0, low_open=True))
    def __init__(self, obj: Objective, p, *, z_step: float = 0.04, tol: float = 1e-7) -> None:
        z_step = number("z_step", z_step, low=0.0, low_open=True)
        tol = number("tol", tol, low=0.0, low_open=True)
        p = float_array("p", p, finite=False).reshape(-1)
        if p.size == 0 or np.any(~np.isfinite(p)) or np.any((p <= 0) | (p >= 1)):
            bad = p[~((p > 0) & (p < 1))][:5]
            raise InvalidInputError(f"prompt starts p must lie in (0, 1), got {bad.tolist() or p.tolist()}")
        self.objective = obj
        self.p = p
        self.z_ref = logit(p)
        self.tol = float(tol)
        self.max_check_error = 0.0
        separable = not obj.regime_variant.in_reward and not advantage.changes_regulariser(obj)
        if separable:
            self._build_separable(z_step)
            separable = self._check_separable()
        if not separable:
            self._build_tabulated(max(z_step, 0.1))
        self.path = "separable" if separable else "tabulated"

    # ---- separable path -------------------------------------------------------------------------------
    def _reward_part(self, z: np.ndarray, p: float) -> np.ndarray:
        """``2 x (1 - x) (P_G(a) - P_G(b))`` from the engine at ``pi_ref = (p, 1 - p)`` (beta = 0 there)."""
        q = binary_question(p)
        obj = self.objective
        out = np.empty(z.size)
        x, y = expit(z), expit(-z)                  # y = 1 - x without cancellation
        for i, (xx, yy) in enumerate(zip(x, y)):
            P = reward_preference(q, obj, np.array([xx, yy]))
            out[i] = 2.0 * xx * yy * (P[0] - P[1])
        return out

    def _build_separable(self, z_step: float) -> None:
        from scipy.interpolate import CubicSpline

        n = int(round(2 * Z_MAX / z_step)) + 1
        nodes = np.linspace(-Z_MAX, Z_MAX, n)
        self._a = CubicSpline(nodes, self._reward_part(nodes, 0.5))
        self._da = self._a.derivative()
        mids = (nodes[:-1] + nodes[1:]) / 2
        check = mids[:: max(1, mids.size // 200)]     # every midpoint would double the build: 200 spread over z
        self.max_check_error = float(np.max(np.abs(self._a(check) - self._reward_part(check, 0.5))))
        if self.max_check_error > self.tol:
            raise InvalidInputError(f"the reward part of the update is not resolved by a z-grid of step {z_step:g}: "
                                    f"midpoint error {self.max_check_error:.2e} > tol {self.tol:g}; give a smaller z_step")

    def _check_separable(self) -> bool:
        """``P_G(a) - P_G(b)`` must not depend on ``p`` (true for a reward law with the KL outside the reward)."""
        z = np.array([-3.0, 0.3, 2.0])
        return bool(np.allclose(self._reward_part(z, 0.2), self._reward_part(z, 0.7), rtol=0, atol=1e-12))

    def _penalty(self, z: np.ndarray, z_ref: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``-2 beta x (1 - x) (c_a - c_b)``, exact and elementwise."""
        obj = self.objective
        beta = obj.beta
        x = expit(z)
        if not obj.regime_variant.regularises or beta == 0:
            return np.zeros_like(z)
        if obj.regime_variant.is_reverse:
            return 2.0 * beta * (p - x)
        if obj.regime_variant.is_direct:
            return -2.0 * beta * x * (1.0 - x) * (z - z_ref)
        log_x = -np.logaddexp(0.0, -z)              # log x
        log_1mx = -np.logaddexp(0.0, z)             # log (1 - x)
        lr_a = log_x - np.log(p)
        lr_b = log_1mx - np.log1p(-p)
        ca = kl.flow_coefficient(obj, lr_a)
        cb = kl.flow_coefficient(obj, lr_b)
        return -2.0 * beta * x * (1.0 - x) * (ca - cb)

    # ---- tabulated path -------------------------------------------------------------------------------
    def _build_tabulated(self, z_step: float) -> None:
        from scipy.interpolate import RectBivariateSpline

        u = np.unique(self.z_ref)
        if u.size <= 24:
            nodes_u = u if u.size >= 4 else np.linspace(u.min() - 1.5, u.max() + 1.5, 4)
        else:
            nodes_u = np.linspace(u.min(), u.max(), 33)
        if nodes_u.size >= 4 and u.size < 4:
            nodes_u = np.unique(np.concatenate([nodes_u, u]))
        zmax = 30.0
        nodes_z = np.linspace(-zmax, zmax, int(round(2 * zmax / z_step)) + 1)
        vals = np.array([_engine_h(self.objective, float(expit(uu)), nodes_z) for uu in nodes_u])
        self._tab = RectBivariateSpline(nodes_u, nodes_z, vals, kx=3, ky=3, s=0)
        self._zmax = zmax
        mz = (nodes_z[:-1] + nodes_z[1:])[:: max(1, nodes_z.size // 40)] / 2
        mu = u[:: max(1, u.size // 4)]
        err = 0.0
        for uu in mu:
            err = max(err, float(np.max(np.abs(self._tab.ev(np.full(mz.size, uu), mz)
                                                - _engine_h(self.objective, float(expit(uu)), mz)))))
        self.max_check_error = err

    @checked(p=arr(ndim=(0, 1), finite=False))
    def with_p(self, p) -> "PromptField":
        """The same objective's field for other references ``p`` (the interpolated part is shared, not rebuilt).

        Parameters
        ----------
        p : array_like
            New ``p_ref`` per prompt, in ``(0, 1)``.

        Returns
        -------
        PromptField
            The field of the same objective at the references ``p``.
        """
        import copy

        p = np.asarray(p, dtype=float).reshape(-1)
        if p.size == 0 or np.any(~((p > 0) & (p < 1))):
            raise InvalidInputError(f"prompt starts p must lie in (0, 1), got {p[~((p > 0) & (p < 1))][:5].tolist()}")
        new = copy.copy(self)
        new.p = p
        new.z_ref = logit(p)
        return new

    # ---- evaluation -----------------------------------------------------------------------------------
    @checked(z=numbers(), index=optional(indices))
    def h(self, z, index=None) -> np.ndarray:
        """``dz/dt`` of each prompt under its own update: ``h(z_i; p_i)``.

        Parameters
        ----------
        z : array_like
            Logits, one per prompt (or per prompt of ``index``).
        index : array_like of int, optional
            Which prompts ``z`` belongs to (default: all, in order).

        Returns
        -------
        numpy.ndarray
            ``h``, shaped like ``z``.
        """
        z = np.asarray(z, dtype=float)
        if index is not None:
            index_below("index", int(np.max(index, initial=0)), self.p.size, "prompts")
        p = self.p if index is None else self.p[index]
        z_ref = self.z_ref if index is None else self.z_ref[index]
        try:
            np.broadcast_shapes(z.shape, np.shape(p))
        except ValueError:
            raise InvalidInputError(f"z of shape {z.shape} does not match the {np.size(p)} prompts (or index)") from None
        if self.path == "separable":
            zc = np.clip(z, -Z_MAX, Z_MAX)
            return self._a(zc) + self._penalty(z, z_ref, p)
        zc = np.clip(z, -self._zmax, self._zmax)
        return self._tab.ev(z_ref, zc)

    @checked(z=numbers(), index=optional(indices), eps=num(0, 1, low_open=True))
    def dh(self, z, index=None, eps: float = 1e-5) -> np.ndarray:
        """``dh/dz`` of each prompt at ``z`` (central difference of :meth:`h`; the Jacobian's diagonal).

        Parameters
        ----------
        z : array_like
            Logits.
        index : array_like of int, optional
            As for :meth:`h`.
        eps : float
            Step of the difference.

        Returns
        -------
        numpy.ndarray
            ``dh/dz`` of each prompt (of the prompts ``index``), shaped like ``z``.
        """
        z = np.asarray(z, dtype=float)
        return (self.h(z + eps, index) - self.h(z - eps, index)) / (2 * eps)

    def engine_h(self, z, i: int) -> np.ndarray:
        """``h`` of prompt ``i`` at ``z`` straight from the engine (one solve per value): the independent path.

        Parameters
        ----------
        z : array_like
            Logits.
        i : int
            The prompt's position.

        Returns
        -------
        numpy.ndarray
            ``h`` at each ``z``, 1-d.
        """
        arr(ndim=(0, 1), nonempty=False)("z", z)
        index_below("i", i, self.p.size, "prompts")
        return _engine_h(self.objective, float(self.p[i]), np.atleast_1d(np.asarray(z, dtype=float)))
