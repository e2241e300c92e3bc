"""bench/results/stats.py: intervals hold the mean, are reproducible, widen with noise; verdicts; pass^k."""
from __future__ import annotations

from bench.results.stats import interval, paired_interval, pass_hat_k, unpaired_interval, verdict


def test_an_interval_holds_the_mean_and_is_reproducible():
    groups = [[0.5, 0.6], [0.7], [0.9, 0.8, 0.85], [0.4]]
    a, b = interval(groups), interval(groups)
    assert a == b
    assert a.low < a.mean < a.high
    assert abs(a.mean - sum(sum(g) for g in groups) / 7) < 1e-12


def test_identical_values_give_a_point_and_no_values_none():
    iv = interval([[0.3, 0.3], [0.3]])
    assert iv.low == iv.high == iv.mean == 0.3
    assert interval([[], []]) is None


def test_more_noise_gives_a_wider_interval():
    calm = interval([[0.5 + 0.01 * (i % 3) for i in range(5)] for _ in range(8)])
    noisy = interval([[0.5 + 0.2 * (i % 3) for i in range(5)] for _ in range(8)])
    assert noisy.high - noisy.low > 5 * (calm.high - calm.low)


def test_pairing_cancels_what_scenarios_share():
    """Scenarios far apart, each improved by about 0.05: paired, the change is clearly better; unpaired,
    the spread between scenarios swamps it."""
    base = [[0.1, 0.12], [0.5, 0.52], [0.9, 0.88], [0.3, 0.31], [0.7, 0.69]]
    pairs = [[(b, b + 0.05 + 0.005 * i) for i, b in enumerate(g)] for g in base]
    paired = paired_interval(pairs)
    assert paired.low > 0 and verdict(paired, higher_is_better=True) == "better"
    assert verdict(paired, higher_is_better=False) == "worse"
    apart = unpaired_interval([([b for b, _ in g], [n for _, n in g]) for g in pairs])
    assert apart.low < paired.low


def test_a_verdict_is_tied_when_the_interval_holds_zero():
    noise = paired_interval([[(0.5, 0.52), (0.5, 0.47)], [(0.6, 0.61), (0.6, 0.58)], [(0.4, 0.42), (0.4, 0.39)]])
    assert noise.holds(0.0) and verdict(noise, True) == "tied"
    assert verdict(None, True) == "tied"


def test_pass_hat_k_keeps_only_probes_passed_every_time():
    assert pass_hat_k({"p1": [True, True, True], "p2": [True, False, True], "p3": [False] * 3}) == 1 / 3
    assert pass_hat_k({}) is None
