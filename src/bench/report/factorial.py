"""Writer × agent: a sweep over both (`-m writer.model=A,B agent.model=X,Y`) read as a factorial design.

Which writer wrote the memory and which agent read it are two factors; a bench that only reports each
combination's mean cannot say whether a writer's lead holds under another agent. Here each factor's main
effect and their interaction are computed on the scenarios every combination ran, and with repeats the
spread of each cell is split into its sources: the session (scenario), the writer's seed (the repeat) and
the agent's seed (`agent.seed`, swept apart from the repeats so the two are crossed). Variances are plain
(population) variances of means, so for a complete crossed design the seed parts add up to the spread
within a scenario; a deterministic agent gives an agent-seed part of exactly 0.
"""
from __future__ import annotations

import re
from itertools import combinations
from statistics import mean, pvariance
from typing import Any

from bench.results.stats import interval

VARIANT = re.compile(r"^(?P<name>.*?)\[(?P<variant>.*)\]$")


def split(label: str) -> tuple[str, dict[str, str]]:
    """`naive[agent.model=offline\\:blur,agent.seed=1]` -> ("naive", {"agent.model": "offline:blur", ...})."""
    m = VARIANT.match(str(label))
    if not m:
        return str(label), {}
    pairs = [p.split("=", 1) for p in re.split(r"(?<!\\),", m["variant"]) if "=" in p]
    return m["name"], {k: v.replace("\\:", ":").replace("\\,", ",") for k, v in pairs}


def factors(df, agent: str):
    """The frame with `base` (the strategy and any other swept setting), `agent`, `agent_seed` (None when not
    swept: the repeat's seed drives writer and agent together) and `writer_seed` columns."""
    base, agents, seeds = [], [], []
    for label in df["strategy"]:
        name, v = split(label)
        agents.append(v.pop("agent.model", agent))
        seeds.append(v.pop("agent.seed", None))
        base.append(f"{name}[{','.join(f'{k}={x}' for k, x in v.items())}]" if v else name)
    return df.assign(base=base, agent=agents, agent_seed=seeds, writer_seed=df["seed"].astype(str))


def applies(df, agent: str) -> bool:
    """A writer × agent design: at least two writers and two agents among the cells."""
    f = factors(df, agent)
    return f["writer"].nunique() > 1 and f["agent"].nunique() > 1


def effects(df, metrics: list[str], agent: str):
    """Per strategy and metric: each writer × agent mean, the writer's and the agent's main effect and their
    interaction, on the scenarios every combination ran. With two levels an effect is second minus first
    (in the order given) with its 95% interval (bootstrap over scenarios) and the interaction is the
    difference of differences; with more, an effect is the spread of its level means and the interaction
    the largest difference of differences over any two levels of each."""
    import pandas as pd

    f = factors(df, agent)
    writers, agents = list(dict.fromkeys(f["writer"].astype(str))), list(dict.fromkeys(f["agent"]))
    rows: list[dict[str, Any]] = []
    for base, g in f.groupby("base", sort=True):
        combos = g.groupby(["writer", "agent"])["scenario"].agg(set)
        if len(combos) < len(writers) * len(agents):
            continue
        common = set.intersection(*combos.tolist())
        g = g[g["scenario"].isin(common)]
        for m in metrics:
            if m not in g.columns or g[m].isna().all():
                continue
            by = g.dropna(subset=[m]).groupby(["writer", "agent"])[m].mean()
            if len(by) < len(writers) * len(agents):
                continue
            cell = {(w, a): float(by[(w, a)]) for w in writers for a in agents}
            row: dict[str, Any] = {"strategy": base, "metric": m, "scenarios": len(common),
                                   **{f"{w} × {a}": cell[(w, a)] for w in writers for a in agents}}
            row["writer effect"] = _effect([mean(cell[(w, a)] for a in agents) for w in writers])
            row["agent effect"] = _effect([mean(cell[(w, a)] for w in writers) for a in agents])
            row["interaction"] = _interaction(cell, writers, agents)
            if len(writers) == 2:
                row["writer effect 95%"] = _contrast(g, m, "writer", writers)
            if len(agents) == 2:
                row["agent effect 95%"] = _contrast(g, m, "agent", agents)
            rows.append(row)
    return pd.DataFrame(rows)


def _effect(levels: list[float]) -> float:
    return levels[1] - levels[0] if len(levels) == 2 else max(levels) - min(levels)


def _interaction(cell: dict, writers: list[str], agents: list[str]) -> float:
    dd = [(cell[(w2, a2)] - cell[(w1, a2)]) - (cell[(w2, a1)] - cell[(w1, a1)])
          for w1, w2 in combinations(writers, 2) for a1, a2 in combinations(agents, 2)]
    return dd[0] if len(dd) == 1 else max(dd, key=abs)


def _contrast(g, m: str, factor: str, levels: list[str]) -> str:
    """The 95% interval of a two-level factor's effect: per scenario and seed, the second level's mean over the
    other factor minus the first's, bootstrapped over scenarios."""
    per: dict[str, list[float]] = {}
    for (scen, seed, aseed), h in g.dropna(subset=[m]).groupby(["scenario", "writer_seed", "agent_seed"], dropna=False):
        means = h.groupby(factor)[m].mean()
        if all(lv in means.index for lv in levels):
            per.setdefault(scen, []).append(float(means[levels[1]] - means[levels[0]]))
    iv = interval(per.values())
    return iv.text() if iv else ""


def variance(df, metrics: list[str], agent: str):
    """Per strategy, writer, agent and metric with repeats: the variance of the cells' scores split into the
    session (between scenarios), the writer's seed and the agent's seed (within a scenario), and what is
    left (their interaction). Without `agent.seed` swept the repeat's seed drives both, and the two seed
    parts cannot be told apart: one `seeds (writer and agent)` part is given instead."""
    import pandas as pd

    f = factors(df, agent)
    rows: list[dict[str, Any]] = []
    for (base, writer, ag), g in f.groupby(["base", "writer", "agent"], sort=True):
        crossed = g["agent_seed"].notna().all() and g["agent_seed"].nunique() > 1
        if g["writer_seed"].nunique() < 2 and not crossed:
            continue
        for m in metrics:
            h = g.dropna(subset=[m]) if m in g.columns else g.iloc[0:0]
            if h.empty:
                continue
            y: dict[str, dict[tuple[str, str], float]] = {}
            for r in h.to_dict("records"):
                y.setdefault(r["scenario"], {})[(r["writer_seed"], str(r["agent_seed"]))] = float(r[m])
            session = pvariance([mean(v.values()) for v in y.values()]) if len(y) > 1 else 0.0
            ws = mean(pvariance(_margin(v, 0)) for v in y.values())
            within = mean(pvariance(list(v.values())) for v in y.values())
            row = {"strategy": base, "writer": writer, "agent": ag, "metric": m, "scenarios": len(y),
                   "writer seeds": g["writer_seed"].nunique(), "agent seeds": g["agent_seed"].nunique() if crossed else "",
                   "session": session}
            if crossed:
                a = mean(pvariance(_margin(v, 1)) for v in y.values())
                row.update({"writer seed": ws, "agent seed": a, "interaction": max(0.0, within - ws - a)})
            else:
                row["seeds (writer and agent)"] = within
            rows.append(row)
    return pd.DataFrame(rows)


def _margin(v: dict[tuple[str, str], float], axis: int) -> list[float]:
    """Means over the other seed, one per seed of `axis` (0: writer, 1: agent); one value needs two to vary."""
    groups: dict[str, list[float]] = {}
    for k, x in v.items():
        groups.setdefault(k[axis], []).append(x)
    out = [mean(xs) for xs in groups.values()]
    return out if len(out) > 1 else out * 2


__all__ = ["split", "factors", "applies", "effects", "variance"]
