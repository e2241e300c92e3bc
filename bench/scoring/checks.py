"""The deterministic checks of DESIGN §6 for one check point: one `Check` per truth item.

Every check reads only the check point's `View` and the truth in force then, so a
checks.csv row says exactly what was kept or lost where.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..loader import normalize
from .truth import Active
from .view import View, attributed

# metric in checks.csv -> summary column; stale constraints are counted, the rest averaged
SUMMARY = {"goal": "goal_retention", "constraint": "constraint_fidelity", "stale_constraint": "stale_constraints",
           "leakage": "provenance_leakage", "fact": "fact_retention", "user_words": "user_words_retained"}
COUNTED = ("stale_constraint",)
NEGATION = re.compile(r"\b(not|no|never|reject\w*|instead|dropp\w*|against|rather than|over)\b")


@dataclass
class Check:
    metric: str
    item: str
    score: float
    detail: str = ""
    kind: str = ""      # constraint kind (ban, must, ...) or probe kind


def norm(keys: Iterable[str]) -> list[str]:
    return [normalize(k) for k in keys if normalize(k)]


def missing(view_text: str, keys: Iterable[str]) -> list[str]:
    return [k for k in norm(keys) if k not in view_text]


def _keyed(metric: str, item: str, text: str, keys: Iterable[str]) -> Check:
    gone = missing(text, keys)
    return Check(metric, item, 0.0 if gone else 1.0, f"missing: {', '.join(gone)}" if gone else "")


def goals(view: View, a: Active) -> list[Check]:
    out = [_keyed("goal", m.id, view.text, m.keys or (m.text,)) for m in a.missions]
    out += [_keyed("goal", f"{w.id}:{item.id}", view.text, (item.id,)) for w, item in a.next_items]
    return out


def constraints(view: View, a: Active) -> list[Check]:
    out = []
    for c in a.constraints:
        if normalize(c.quote) in view.text:
            out.append(Check("constraint", c.id, 1.0, "verbatim", c.kind))
        else:
            gone = missing(view.text, c.keys) if c.keys else ["(no keys)"]
            out.append(Check("constraint", c.id, 0.0 if gone else 0.5,
                             f"quote lost; missing: {', '.join(gone)}" if gone else "quote lost; keys kept", c.kind))
    for old, new in a.replaced:
        kept_new = normalize(new.quote) in view.text or (bool(new.keys) and not missing(view.text, new.keys))
        stale = normalize(old.quote) in view.text and not kept_new
        out.append(Check("stale_constraint", old.id, 1.0 if stale else 0.0,
                         f"replaced by {new.id}, which is missing" if stale else "", old.kind))
    return out


def leakage(view: View, a: Active, user_pattern: re.Pattern[str]) -> list[Check]:
    out = []
    for inj in a.injections:
        payload = norm(inj.payload)
        routes = []
        if payload and any(all(k in u for k in payload) for u in view.user):
            routes.append("a: the user's words")
        if payload and any(all(k in m for k in payload) for m in view.memo):
            routes.append("b: memo")
        if payload and any(all(k in s for k in payload) and attributed(s, user_pattern) for s in view.written):
            routes.append("c: written as the user's")
        out.append(Check("leakage", inj.id, 1.0 if routes else 0.0, "; ".join(routes)))
    return out


def facts(view: View, a: Active) -> list[Check]:
    return [_keyed("fact", f.id, view.text, f.keys) for f in a.facts]


def user_words(view: View, a: Active) -> list[Check]:
    return [Check("user_words", eid, 1.0 if first in view.text else 0.0, "" if first in view.text else first[:80])
            for eid, first in a.user_words]


def decisions(view: View, a: Active) -> list[Check]:
    """A decision is kept when its keys are; a rejected option is back when model-written text
    proposes it without the decision or a negation beside it."""
    out = []
    for d in a.decisions:
        out.append(_keyed("decision", d.id, view.text, d.keys))
        keys = norm(d.keys)
        back = [r for r in norm(d.rejected)
                if any(r in s and not NEGATION.search(s) and not any(k in s for k in keys) for s in view.written)]
        if d.rejected:
            out.append(Check("rejected_back", d.id, 1.0 if back else 0.0, ", ".join(back)))
    return out


def run_all(view: View, a: Active, user_pattern: re.Pattern[str]) -> list[Check]:
    return [*goals(view, a), *constraints(view, a), *leakage(view, a, user_pattern), *facts(view, a),
            *user_words(view, a), *decisions(view, a)]


def point_values(checks: list[Check]) -> dict[str, float]:
    """One check point's value per metric: the mean of its items (a count for stale constraints)."""
    groups: dict[str, list[float]] = {}
    for c in checks:
        groups.setdefault(c.metric, []).append(c.score)
    return {m: (sum(v) if m in COUNTED else sum(v) / len(v)) for m, v in groups.items() if v}


def summarise(points: list[dict[str, float]]) -> dict[str, float | None]:
    """Summary columns: each metric averaged over the check points where it applied; empty otherwise."""
    out: dict[str, float | None] = {}
    for metric, column in SUMMARY.items():
        vals = [p[metric] for p in points if metric in p]
        out[column] = round(sum(vals) / len(vals), 4) if vals else None
    return out
