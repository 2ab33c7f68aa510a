"""A geometric multigrid solver for an anisotropic Poisson problem: the simulation code
whose solver parameters the claim table poisson-multigrid tunes (make_claim_tables.py).

The problem: -(eps u_xx + u_yy) = f on the unit square, u = 0 on its boundary, on a grid
of n x n points (n = 2^k + 1), f drawn once from a fixed seed so that every frequency is
present. A cycle is a V- or W-cycle of a point smoother (damped Jacobi or red-black
successive over-relaxation), full-weighting restriction, bilinear prolongation and the
operator rediscretised on each coarser grid; the coarsest grid is only smoothed. Its
parameters decide whether it converges at all (Jacobi diverges above omega of about 1, a
cycle without sweeps does not move), how fast, and what a cycle costs.
"""
import numpy as np


class Problem:
    def __init__(self, n=513, eps=0.05, seed=7):
        if (n - 1) & (n - 2) != 0 or n < 5:
            raise ValueError(f"grid size {n} is not 2^k + 1")
        self.n, self.eps = n, eps
        self.f = np.zeros((n, n))
        self.f[1:-1, 1:-1] = np.random.default_rng(seed).standard_normal((n - 2, n - 2))


def residual(u, f, eps, h):
    """f - A u on the interior (zero on the boundary)."""
    r = np.zeros_like(u)
    c = u[1:-1, 1:-1]
    r[1:-1, 1:-1] = f[1:-1, 1:-1] - (eps * (2 * c - u[:-2, 1:-1] - u[2:, 1:-1]) +
                                     (2 * c - u[1:-1, :-2] - u[1:-1, 2:])) / (h * h)
    return r


def colour_masks(n):
    i, j = np.indices((n - 2, n - 2))
    return [(i + j) % 2 == 0, (i + j) % 2 == 1]


class Solver:
    """The cycle a configuration describes: smoother ("jacobi", "rbsor"), omega, pre and
    post sweeps, levels (1: the fine grid alone), cycle ("V", "W") and the sweeps on the
    coarsest grid."""

    def __init__(self, problem, smoother, omega, pre, post, levels, cycle, coarse_sweeps):
        self.problem = problem
        self.smoother, self.omega = smoother, omega
        self.pre, self.post, self.cycle_kind, self.coarse_sweeps = pre, post, cycle, coarse_sweeps
        sizes = [problem.n]
        while len(sizes) < levels and sizes[-1] > 5:
            sizes.append((sizes[-1] - 1) // 2 + 1)
        self.sizes = sizes
        self.masks = {n: colour_masks(n) for n in sizes} if smoother == "rbsor" else {}

    def smooth(self, u, f, n, sweeps):
        eps, h = self.problem.eps, 1.0 / (n - 1)
        diagonal = 2 * (eps + 1) / (h * h)
        for _ in range(sweeps):
            if self.smoother == "jacobi":
                u[1:-1, 1:-1] += self.omega * residual(u, f, eps, h)[1:-1, 1:-1] / diagonal
                continue
            for mask in self.masks[n]:  # one colour's points depend only on the other's
                inner = u[1:-1, 1:-1]
                inner[mask] += self.omega * residual(u, f, eps, h)[1:-1, 1:-1][mask] / diagonal

    @staticmethod
    def restrict(r):
        """Full weighting onto the grid of every second point."""
        c = r[::2, ::2].copy()
        c[1:-1, 1:-1] = (4 * r[2:-2:2, 2:-2:2] +
                         2 * (r[1:-3:2, 2:-2:2] + r[3:-1:2, 2:-2:2] + r[2:-2:2, 1:-3:2] + r[2:-2:2, 3:-1:2]) +
                         r[1:-3:2, 1:-3:2] + r[1:-3:2, 3:-1:2] + r[3:-1:2, 1:-3:2] + r[3:-1:2, 3:-1:2]) / 16
        c[0, :] = c[-1, :] = c[:, 0] = c[:, -1] = 0
        return c

    @staticmethod
    def prolong(e, n):
        """Bilinear interpolation onto the grid twice as fine."""
        fine = np.zeros((n, n))
        fine[::2, ::2] = e
        fine[1::2, ::2] = (e[:-1, :] + e[1:, :]) / 2
        fine[:, 1::2] = (fine[:, :-1:2] + fine[:, 2::2]) / 2
        return fine

    def run_cycle(self, u, f, level=0):
        n = self.sizes[level]
        if level == len(self.sizes) - 1:
            self.smooth(u, f, n, self.coarse_sweeps)
            return
        self.smooth(u, f, n, self.pre)
        coarse_f = self.restrict(residual(u, f, self.problem.eps, 1.0 / (n - 1)))
        coarse_u = np.zeros_like(coarse_f)
        for _ in range(2 if self.cycle_kind == "W" else 1):
            self.run_cycle(coarse_u, coarse_f, level + 1)
        u += self.prolong(coarse_u, n)
        self.smooth(u, f, n, self.post)
