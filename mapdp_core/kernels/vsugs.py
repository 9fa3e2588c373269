"""The numba kernels of V-SUGS (variational SUGS; Greaves-Tunnell §2.3, Algorithm 2, eqs 4-11,
corrected as in OTHER-SYSTEMS.md 1.3-1.4). No validation here (see :mod:`mapdp_core.models.vsugs`).

Two component families, in the project's parameterisation:

* Normal-Gamma per column (the report's model): tau ~ Gamma(a shape, b rate),
  mu | tau ~ N(m, 1/(c tau)); the report's nu (which multiplies the variance) is 1/c.
* Normal-Wishart (E11, derived): Lambda ~ Wishart(B, a) (B the scale, E[Lambda] = a B),
  mu | Lambda ~ N(m, (c Lambda)^-1), as in EJS Appendix B and ``families/normal_wishart``.

A weighted conjugate update with weight w (eqs 8-11) is the ordinary update with the row
counted w times; two updates of weights w1 and w2 at the same row equal one of w1 + w2.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

LOG_2PI = math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


@njit(cache=True)
def digamma(x):
    """psi(x) for x > 0: recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6.0:
        out -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return out + math.log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240
                                                                                               - f / 132))))


# ------------------------------------------------------------------ Normal-Gamma, one column
@njit(cache=True)
def ng_update(m, c, a, b, y, w):
    """(m', c', a', b') after adding y with weight w (GT eqs 8-11 in this parameterisation)."""
    c1 = c + w
    m1 = (c * m + w * y) / c1
    a1 = a + 0.5 * w
    b1 = b + 0.5 * c * w / c1 * (y - m) ** 2
    return m1, c1, a1, b1


@njit(cache=True)
def ng_log_predictive(y, m, c, a, b):
    """ln t_{2a}(y; m, scale^2 = b (c + 1)/(a c)) (GT eq 7)."""
    nu = 2.0 * a
    s2 = b * (c + 1.0) / (a * c)
    return (math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu) - 0.5 * math.log(nu * math.pi * s2)
            - 0.5 * (nu + 1.0) * math.log1p((y - m) ** 2 / (nu * s2)))


@njit(cache=True)
def ng_expected_loglik(y, m, c, a, b):
    """E[ln N(y | mu, 1/tau)] under NG(m, c, a, b): (psi(a) - ln b - ln 2 pi - 1/c - (y - m)^2 a/b)/2
    (the report's E_l with erratum E6: a/b, not b/a)."""
    return 0.5 * (digamma(a) - math.log(b) - LOG_2PI - 1.0 / c - (y - m) ** 2 * a / b)


@njit(cache=True)
def ng_kl(m1, c1, a1, b1, m0, c0, a0, b0):
    """KL(NG(m1, c1, a1, b1) || NG(m0, c0, a0, b0)) (OTHER-SYSTEMS 1.3, checked by quadrature)."""
    return ((a1 - a0) * digamma(a1) - math.lgamma(a1) + math.lgamma(a0) + a0 * (math.log(b1) - math.log(b0))
            + a1 * (b0 - b1) / b1 + (m1 - m0) ** 2 * c0 * a1 / (2.0 * b1)
            + 0.5 * (c0 / c1 - 1.0 - math.log(c0 / c1)))


# ------------------------------------------------------------------ Normal-Wishart, one block
@njit(cache=True)
def _quad(B, u):
    """u^T B u."""
    D = u.shape[0]
    out = 0.0
    for p in range(D):
        acc = 0.0
        for q in range(D):
            acc += B[p, q] * u[q]
        out += u[p] * acc
    return out


@njit(cache=True)
def nw_update(m, c, B, logdetB, a, y, w, m_out, B_out):
    """Weighted Normal-Wishart update (OTHER-SYSTEMS 1.3, E11): c' = c + w, m' = (c m + w y)/c',
    a' = a + w, B'^-1 = B^-1 + (c w/(c + w)) (y - m)(y - m)^T, the last by Sherman-Morrison
    so that B' and ln|B'| cost O(D^2). Writes m', B' into m_out, B_out; returns
    (c', ln|B'|, a', tr(B^-1 B')), the last being D - beta q/(1 + beta q) with q = u^T B u."""
    D = y.shape[0]
    c1 = c + w
    beta = c * w / c1
    quad = 0.0
    for p in range(D):  # m_out holds B (y - m) for a moment (plain loops: no BLAS to compile)
        acc = 0.0
        for q in range(D):
            acc += B[p, q] * (y[q] - m[q])
        m_out[p] = acc
        quad += (y[p] - m[p]) * acc
    denom = 1.0 + beta * quad
    for p in range(D):
        for q in range(D):
            B_out[p, q] = B[p, q] - beta * m_out[p] * m_out[q] / denom
    for p in range(D):
        m_out[p] = (c * m[p] + w * y[p]) / c1
    return c1, logdetB - math.log(denom), a + w, D - (denom - 1.0) / denom


@njit(cache=True)
def nw_log_predictive(y, m, c, B, logdetB, a):
    """ln of the multivariate Student-t predictive: nu = a - D + 1, precision c nu/(c + 1) B
    (EJS Appendix B; PLOS eq 20)."""
    D = y.shape[0]
    nu = a - D + 1.0
    q = c / (c + 1.0) * _quad(B, y - m)
    return (math.lgamma(0.5 * (nu + D)) - math.lgamma(0.5 * nu) - 0.5 * D * (math.log(nu) + LOG_PI)
            + 0.5 * D * math.log(c * nu / (c + 1.0)) + 0.5 * logdetB - 0.5 * (nu + D) * math.log1p(q))


@njit(cache=True)
def _multi_digamma(x, D):
    out = 0.0
    for d in range(D):
        out += digamma(x - 0.5 * d)
    return out


@njit(cache=True)
def _multi_lgamma(x, D):
    out = 0.25 * D * (D - 1) * LOG_PI
    for d in range(D):
        out += math.lgamma(x - 0.5 * d)
    return out


@njit(cache=True)
def nw_expected_loglik(y, m, c, B, logdetB, a):
    """E[ln N(y | mu, Lambda^-1)] under NW(m, c, B, a):
    (E ln|Lambda| - D ln 2 pi - D/c - a (y - m)^T B (y - m))/2, E ln|Lambda| = psi_D(a/2) + D ln 2 + ln|B|."""
    D = y.shape[0]
    elog = _multi_digamma(0.5 * a, D) + D * math.log(2.0) + logdetB
    return 0.5 * (elog - D * LOG_2PI - D / c - a * _quad(B, y - m))


@njit(cache=True)
def nw_kl(m1, c1, B1, logdetB1, a1, m0, c0, B0inv, logdetB0, a0):
    """KL(NW(m1, c1, B1, a1) || NW(m0, c0, B0, a0)); see :func:`nw_kl_trace`."""
    D = m1.shape[0]
    tr = 0.0
    for p in range(D):
        for q in range(D):
            tr += B0inv[p, q] * B1[q, p]
    return nw_kl_trace(m1, c1, B1, logdetB1, a1, m0, c0, logdetB0, a0, tr)


@njit(cache=True)
def nw_kl_trace(m1, c1, B1, logdetB1, a1, m0, c0, logdetB0, a0, tr):
    """KL(NW(m1, c1, B1, a1) || NW(m0, c0, B0, a0)): the Wishart KL
    (a1 - a0)/2 psi_D(a1/2) + a0/2 (ln|B0| - ln|B1|) + a1/2 (tr(B0^-1 B1) - D) + lnG_D(a0/2) - lnG_D(a1/2)
    plus the expected Gaussian KL (D (c0/c1 - 1 - ln(c0/c1)) + c0 a1 (m1 - m0)^T B1 (m1 - m0))/2.
    With D = 1 it is the Normal-Gamma KL (a = 2 a_NG, B = 1/(2 b_NG)). ``tr`` = tr(B0^-1 B1)."""
    D = m1.shape[0]
    wishart = (0.5 * (a1 - a0) * _multi_digamma(0.5 * a1, D) + 0.5 * a0 * (logdetB0 - logdetB1)
               + 0.5 * a1 * (tr - D) + _multi_lgamma(0.5 * a0, D) - _multi_lgamma(0.5 * a1, D))
    r = c0 / c1
    gauss = 0.5 * (D * (r - 1.0 - math.log(r)) + c0 * a1 * _quad(B1, m1 - m0))
    return wishart + gauss


# ------------------------------------------------------------------ the pass
@njit(cache=True)
def _prior_weights(t, T, alpha, s, logq):
    """ln q_il for the options of the row after t rows (OTHER-SYSTEMS 1.3, eq 5 corrected,
    E4): (s_l + alpha/T)/(alpha + t) for the A = min(t, T) active components and, if A < T,
    alpha (1 - A/T)/(alpha + t) for the next one. Returns the number of options."""
    A = min(t, T)
    norm = math.log(alpha + t)
    for l in range(A):
        logq[l] = math.log(s[l] + alpha / T) - norm
    if A < T:
        logq[A] = math.log(alpha * (1.0 - A / T)) - norm
        return A + 1
    return A


@njit(cache=True)
def _respond(i, logw, n, hard, resp, labels):
    """Row i's responsibilities (eq 4) from its log weights into resp[i], one-hot at the argmax
    when ``hard``, and that argmax into labels[i]; returns resp[i]."""
    r = resp[i]
    top = -np.inf
    best = 0
    for l in range(n):
        if logw[l] > top:
            top = logw[l]
            best = l
    total = 0.0
    for l in range(n):
        total += math.exp(logw[l] - top)
    for l in range(n):
        r[l] = (1.0 if l == best else 0.0) if hard else math.exp(logw[l] - top) / total
    labels[i] = best
    return r


@njit(cache=True, nogil=True)
def ng_pass(X, order, start, stop, alpha, T, m, c, a, b, s, m0, c0, a0, b0, hard, labels, resp, logq, logw):
    """V-SUGS with a Normal-Gamma per column over rows ``order[start:stop]`` (GT Algorithm 2):
    prior weights (eq 5 corrected), responsibilities (eq 4), weighted updates (eqs 8-11) of
    every component with r_l > 0 and the row's ELBO term (L238-248 with errata E5 and E6):
    L_i = -sum_l KL(q_i(theta_l) || q_(i-1)(theta_l)) + sum_l r_l E_l - sum_l r_l ln r_l + sum_l r_l ln q_il.
    Components are (T, D) arrays of m, c, a, b and the soft counts s (T,). ``labels[i]`` gets
    the argmax component; ``resp[i]`` its responsibility. Returns the ELBO of these rows."""
    D = X.shape[1]
    elbo = 0.0
    for t in range(start, stop):
        i = order[t]
        n = _prior_weights(t, T, alpha, s, logq)
        for l in range(n):
            lp = logq[l]
            for d in range(D):
                lp += ng_log_predictive(X[i, d], m[l, d], c[l, d], a[l, d], b[l, d])
            logw[l] = lp
        r = _respond(i, logw, n, hard, resp, labels)
        for l in range(n):
            w = r[l]
            if w <= 0.0:
                continue
            elbo += w * (logq[l] - math.log(w))
            for d in range(D):
                mm, cc, aa, bb = ng_update(m[l, d], c[l, d], a[l, d], b[l, d], X[i, d], w)
                elbo -= ng_kl(mm, cc, aa, bb, m[l, d], c[l, d], a[l, d], b[l, d])
                elbo += w * ng_expected_loglik(X[i, d], mm, cc, aa, bb)
                m[l, d], c[l, d], a[l, d], b[l, d] = mm, cc, aa, bb
            s[l] += w
    return elbo


@njit(cache=True, nogil=True)
def nw_pass(X, order, start, stop, alpha, T, m, c, B, logdetB, a, s, hard, labels, resp, logq, logw, m_new, B_new):
    """As :func:`ng_pass` with one Normal-Wishart component per option: m (T, D), c (T,),
    B (T, D, D), ln|B| (T,), a (T,). ``m_new``, ``B_new`` are scratch (D,), (D, D)."""
    elbo = 0.0
    for t in range(start, stop):
        i = order[t]
        y = X[i]
        n = _prior_weights(t, T, alpha, s, logq)
        for l in range(n):
            logw[l] = logq[l] + nw_log_predictive(y, m[l], c[l], B[l], logdetB[l], a[l])
        r = _respond(i, logw, n, hard, resp, labels)
        for l in range(n):
            w = r[l]
            if w <= 0.0:
                continue
            elbo += w * (logq[l] - math.log(w))
            c1, ld1, a1, tr = nw_update(m[l], c[l], B[l], logdetB[l], a[l], y, w, m_new, B_new)
            elbo -= nw_kl_trace(m_new, c1, B_new, ld1, a1, m[l], c[l], logdetB[l], a[l], tr)
            elbo += w * nw_expected_loglik(y, m_new, c1, B_new, ld1, a1)
            m[l, :] = m_new
            B[l, :, :] = B_new
            c[l], logdetB[l], a[l] = c1, ld1, a1
            s[l] += w
    return elbo
