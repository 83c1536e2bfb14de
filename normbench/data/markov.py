"""A seeded first-order Markov chain over a small alphabet: the optimal next-token loss is its entropy rate
H = -sum_i pi_i sum_j P_ij ln P_ij, known exactly, so a report can show the gap to the optimum; the unigram
entropy H(pi) is what a model that learned only symbol frequencies reaches.

Rows of P are Dirichlet(CONCENTRATION) draws (all entries > 0 almost surely, so the chain is irreducible
and aperiodic and pi is unique). Each data row is an independent chain started from pi."""

from __future__ import annotations

import numpy as np

from normbench.data.token_data import TokenData

STATES = 32
CONCENTRATION = 0.2  # < 1: peaked rows, so the entropy rate sits well below the unigram entropy
TRAIN_CHAINS, HELD_OUT_CHAINS, LENGTH = 256, 32, 2048


def transition_matrix(seed: int, states: int = STATES) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet(np.full(states, CONCENTRATION), size=states)


def stationary(P: np.ndarray) -> np.ndarray:
    """pi with pi P = pi: the left eigenvector of eigenvalue 1, normalized to sum 1."""
    values, vectors = np.linalg.eig(P.T)
    pi = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    return pi / pi.sum()


def entropy_rate(P: np.ndarray, pi: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * np.log(P), 0.0)
    return float(-(pi * terms.sum(1)).sum())


def sample_chains(P: np.ndarray, pi: np.ndarray, chains: int, length: int, rng) -> np.ndarray:
    """(chains, length) states; all chains advance together (inverse-CDF sampling, one step at a time)."""
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    out = np.empty((chains, length), dtype=np.int64)
    out[:, 0] = rng.choice(len(pi), size=chains, p=pi)
    u = rng.random((chains, length))
    for t in range(1, length):
        rows = cdf[out[:, t - 1]]
        out[:, t] = (rows < u[:, t : t + 1]).sum(1)  # first j with cdf_j >= u
    return out


def markov_data(seed: int) -> TokenData:
    import torch

    P = transition_matrix(seed)
    pi = stationary(P)
    rng = np.random.default_rng(seed + 1)
    train = sample_chains(P, pi, TRAIN_CHAINS, LENGTH, rng)
    held_out = sample_chains(P, pi, HELD_OUT_CHAINS, LENGTH, rng)
    return TokenData(
        train=torch.from_numpy(train),
        held_out=torch.from_numpy(held_out),
        vocab=STATES,
        unigram_entropy=float(-(pi * np.log(pi)).sum()),
        optimal_loss=entropy_rate(P, pi),
        unigram_logp=torch.from_numpy(np.log(pi)).float(),
        info={
            "source": "markov",
            "states": STATES,
            "concentration": CONCENTRATION,
            "seed": seed,
            "train_tokens": TRAIN_CHAINS * LENGTH,
        },
    )
