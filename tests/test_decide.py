"""The first screen's rules (bench.report.decide): paired deltas against truncate and the oracle, verdicts, the
Pareto front, and a "what to ship" call the cheapest ways to look good cannot win."""
from __future__ import annotations

import pandas as pd

from bench.report import data, headline
from bench.report import decide as D

SCEN = ["s1", "s2", "s3", "s4", "s5", "s6"]


def cells(rows):
    """A summary frame: rows of (strategy, scenario, goal, constraints, facts, cost ×full, writer, oracle)."""
    out = []
    for strategy, scenario, goal, cons, facts, cost, *rest in rows:
        writer = rest[0] if rest else "offline"
        oracle = rest[1] if len(rest) > 1 else 0
        out.append({"scenario": scenario, "strategy": strategy, "writer": writer, "window": 1000, "seed": 0,
                    "oracle": oracle, "goal_retention": goal, "constraint_fidelity": cons, "fact_retention": facts,
                    "cost_usd": cost, "cost_vs_full": cost})
    df = data.labelled(pd.DataFrame(out))
    return df.assign(retention=data.retention(df))


def floor_of(df):
    return (df["strategy"].map(D.base) == D.FLOOR) & ~D.is_oracle(df)


def test_paired_interval_finds_a_small_steady_gain_that_unpaired_means_hide():
    """Sessions differ a lot (0.1 to 0.9) but the strategy is 0.05 ahead on every one: paired, it is better."""
    rows = [("truncate", s, v, v, v, .3) for s, v in zip(SCEN, [.1, .3, .5, .6, .8, .9])]
    rows += [("steady", s, v + .05, v + .05, v + .05, .4) for s, v in zip(SCEN, [.1, .3, .5, .6, .8, .9])]
    df = cells(rows)
    d = D.versus(df, floor_of(df), ["retention", "goal_retention"])["steady"]
    assert d["retention"].verdict == "better" and abs(d["retention"].diff.mean - .05) < 1e-9
    assert not d["retention"].partial and d["retention"].paired == 6
    a = headline.interval(df[df["strategy"] == "steady"]["retention"])
    b = headline.interval(df[df["strategy"] == "truncate"]["retention"])
    assert a[0] < b[1]     # the unpaired intervals overlap: only pairing sees it


def test_a_strategy_below_the_floor_is_worse_and_lower_is_better_metrics_turn_around():
    rows = [("truncate", s, .5, .5, .5, .3) for s in SCEN]
    rows += [("leaky", s, .2 + .01 * i, .3, .4, .2) for i, s in enumerate(SCEN)]
    df = cells(rows).assign(provenance_leakage=lambda d: [0.0 if s == "truncate" else .2 for s in d["strategy"]])
    d = D.versus(df, floor_of(df), ["goal_retention", "provenance_leakage"])["leaky"]
    assert d["goal_retention"].verdict == "worse"
    assert d["provenance_leakage"].verdict == "worse"        # a rise in leakage is worse
    assert d["goal_retention"].text().startswith("worse -0.")


def test_a_metric_the_oracle_cannot_score_is_not_measurable_never_a_low_number():
    rows = [("full", s, 1, 1, None, 1, "offline", 1) for s in SCEN] + [("naive", s, .5, .5, .4, .5) for s in SCEN]
    df = cells(rows)
    d = D.versus(df, D.is_oracle(df), ["goal_retention", "fact_retention"])["naive"]
    assert d["goal_retention"].verdict == "worse"
    assert d["fact_retention"].verdict == D.NOT_MEASURABLE and d["fact_retention"].text() == D.NOT_MEASURABLE


def test_a_strategy_that_ran_only_where_it_ties_is_partial_and_not_comparable():
    rows = [("truncate", s, .3 if s != "s1" else .9, .3, .3, .3) for s in SCEN]
    rows += [("picky", "s1", .95, .9, .9, .1)]          # one easy session, cheap and good there
    df = cells(rows)
    vs = D.versus(df, floor_of(df), ["retention"])
    assert vs["picky"]["retention"].partial and (vs["picky"]["retention"].paired, vs["picky"]["retention"].of) == (1, 6)
    t = headline.table(df)
    front = [(n, p, k) for n, p, k, over in headline.pareto(t) if not over]
    assert "picky" in [n for n, _, _ in front]          # its mean looks unbeatable ...
    found = {c.strategy: c.kind for c in D.calls(front, vs, {}, {"truncate"})}
    assert found["picky"] == "not comparable"            # ... and it is not called a strategy to ship
    assert "What to ship: no strategy" in D.paragraph(D.calls(front, vs, {}, {"truncate"}))


def test_cheap_and_empty_is_on_the_front_but_never_the_call():
    rows = [("truncate", s, .4, .4, .4, .5) for s in SCEN]
    rows += [("empty", s, .39 + .02 * (i % 2), .4, .4, .05) for i, s in enumerate(SCEN)]   # cheapest, knows as little
    rows += [("good", s, .9, .85, .6 + .01 * i, .7) for i, s in enumerate(SCEN)]
    df = cells(rows)
    vs = D.versus(df, floor_of(df), ["retention", "goal_retention", "fact_retention"])
    t = headline.table(df)
    pts = headline.pareto(t)
    front = [(n, p, k) for n, p, k, over in pts if not over]
    assert [n for n, _, _ in front] == ["empty", "good"]          # truncate is behind `empty`: dearer, knows no more
    assert dict((n, over) for n, _, _, over in pts)["truncate"] == ["empty"]
    found = {c.strategy: c for c in D.calls(front, vs, {}, {"truncate"}, {"good": "goal -0.300 under `offline:x`"})}
    assert found["empty"].kind == "not worth" and found["good"].kind == "ship"
    assert "goal -0.300 under `offline:x`" in found["good"].sentence
    text = D.paragraph(list(found.values()))
    assert text.startswith("What to ship: good knows the most")


def test_worse_on_one_metric_is_a_trade_and_below_the_floor_under_stress_is_fragile():
    rows = [("truncate", s, .4, .4, .5, .5) for s in SCEN]
    rows += [("forgetful", s, .95, .95, .3 + .01 * i, .6) for i, s in enumerate(SCEN)]
    df = cells(rows)
    vs = D.versus(df, floor_of(df), ["retention", "goal_retention", "fact_retention"])
    assert vs["forgetful"]["fact_retention"].verdict == "worse"
    front = [("forgetful", .6, .7)]
    assert D.calls(front, vs, {}, set())[0].kind == "trade"
    assert D.calls(front, vs, {"forgetful": ["`offline:realistic`"]}, set())[0].kind == "fragile"


def test_each_writer_is_paired_with_the_floor_under_the_same_writer_or_the_floors_only_cells():
    rows = [("truncate", s, .3, .3, .3, .3, "offline") for s in SCEN]
    rows += [("naive", s, .6, .6, .6, .4, "offline") for s in SCEN] + [("naive", s, .2, .2, .2, .4, "openai/x")
                                                                       for s in SCEN]
    df = data.per_writer(cells(rows), 2)
    vs = D.versus(df, floor_of(df), ["retention"])
    assert set(vs) == {"naive · offline", "naive · openai/x"}        # never pooled
    assert vs["naive · offline"]["retention"].verdict == "better"
    assert vs["naive · openai/x"]["retention"].verdict == "worse"    # paired with truncate's cells (it calls no writer)
    assert vs["naive · openai/x"]["retention"].paired == 6
