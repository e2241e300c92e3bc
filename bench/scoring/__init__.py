"""Scorers read a finished cell's logs (never strategy internals) and return summary columns.

`score_cell` is the one entry point the run calls. It walks the cell's requests
once: every billed request goes through the cache simulator and the price meter;
check points (the first agent request after each compaction, and the final one)
are read once into a `View` that every check matches against; each probe keeps
the first request after its event and is asked at the end.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..cache_sim import Profile
from ..errors import BadInput
from ..logs import RequestLog, read_jsonl, replay_requests
from ..messages import render_all, system_message
from ..results import KEY_COLUMNS
from .checks import point_values, run_all, summarise
from .truth import Timeline
from .usage import Meter
from .view import build, names_user

CHECK_COLUMNS = [*KEY_COLUMNS, "check_point", "point", "request", "event", "metric", "item", "kind", "score",
                 "detail"]
GRADES = ("auto", "rule", "judge")


@dataclass(frozen=True)
class Scoring:
    """The run's scoring settings (config keys cache.*, price.model, probes.*)."""
    cache: Profile = field(default_factory=Profile)
    price_model: str = ""
    probes: bool = True
    grade: str = "auto"
    pass_score: float = 4.0

    @property
    def model(self) -> str:
        return self.price_model or self.cache.price_model


def settings(cfg: Any) -> Scoring:
    """Scoring settings from the composed config; BadInput names every bad key."""
    from omegaconf import OmegaConf

    from ..pricing import rates

    def plain(key: str) -> Any:
        node = cfg.get(key) if hasattr(cfg, "get") else None
        return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node

    profile = Profile.from_dict(plain("cache") or {})
    price = plain("price") or {}
    probes = plain("probes")
    probes = probes if isinstance(probes, dict) else {"enabled": True if probes is None else bool(probes)}
    grade = str(probes.get("grade", "auto"))
    if grade not in GRADES:
        raise BadInput(f"probes.grade: '{grade}' is not one of {', '.join(GRADES)}")
    s = Scoring(profile, str(price.get("model") or ""), bool(probes.get("enabled", True)), grade,
                float(probes.get("pass_score", 4)))
    rates(s.model, s.cache)   # an unknown price model fails before anything runs
    return replace(s, cache=s.cache.for_model(s.model))


async def score_cell(cell: Any, cell_dir: Path, tok: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary columns and checks.csv rows for one cell."""
    from ..pricing import rates

    sc: Scoring = getattr(cell, "scoring", None) or Scoring()
    scenario, base = cell.scenario, dict(zip(KEY_COLUMNS, cell.key))
    starts = sorted(c["request"] for c in read_jsonl(cell_dir / "compactions.jsonl") if c.get("ok"))
    timeline, user_pattern = Timeline(scenario), names_user(scenario.user)
    meter = Meter(sc.cache, rates(sc.model, sc.cache))
    probes = sorted(scenario.probes, key=lambda p: timeline.pos.get(p.at, 0)) if sc.probes else []
    targets: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    points: list[dict[str, float]] = []
    checked: set[int] = set()
    readings: dict[str, tuple] = {}
    passed, pending, last, prev = 0, False, None, None

    def check(r: Any, k: int, point: str) -> None:
        checks = run_all(build(r.messages, readings), timeline.at(timeline.pos.get(r.record.get("event"), 0)), user_pattern)
        points.append(point_values(checks))
        checked.add(r.i)
        rows.extend({**base, "check_point": k, "point": point, "request": r.i, "event": r.record.get("event"),
                     "metric": c.metric, "item": c.item, "kind": c.kind, "score": c.score, "detail": c.detail}
                    for c in checks)

    for r in replay_requests(read_jsonl(cell_dir / "requests.jsonl"), scenario, tok, cell.markers):
        prev = r
        if r.kind == "probe":
            continue
        meter.add(r)
        while passed < len(starts) and starts[passed] <= r.i:
            passed, pending = passed + 1, True
        if r.kind != "agent":
            continue
        at = timeline.pos.get(r.record.get("event"), 0)
        for p in probes:
            if p.id not in targets and timeline.pos.get(p.at, 0) < at:
                targets[p.id] = r
        if pending:
            check(r, passed, "compaction")
            pending = False
        last = (r, passed)
    if last is not None and last[0].i not in checked:
        check(last[0], last[1], "final")
    scores: dict[str, Any] = {**summarise(points), **meter.columns(), "probe_pass_rate": None}
    if probes:
        contexts = _contexts(probes, targets, last[0] if last else None, timeline, cell, tok)
        outcomes = await _probes(cell, sc, probes, contexts, targets, tok, cell_dir, prev)
        scores["probe_pass_rate"] = round(sum(bool(o.passed) for o in outcomes) / len(outcomes), 4)
        rows.extend({**base, "point": "probe", "request": targets[o.probe.id].i if o.probe.id in targets else "",
                     "event": o.probe.at, "metric": "probe", "item": o.probe.id, "kind": o.probe.kind,
                     "score": "" if o.passed is None else float(o.passed), "detail": o.detail} for o in outcomes)
    return scores, rows


def _contexts(probes: list, targets: dict, last: Any, timeline: Timeline, cell: Any, tok: Any) -> list:
    """Each probe's context; a probe after the last request gets that request plus the events since."""
    out, rendered = [], None
    for p in probes:
        if p.id in targets:
            out.append(targets[p.id].messages)
        elif last is None:
            out.append(None)
        else:
            rendered = rendered or render_all(tok, cell.scenario, cell.markers)
            since = timeline.pos.get(last.record.get("event"), 0)
            out.append([*last.messages, *rendered[since:timeline.pos.get(p.at, since) + 1]])
            targets[p.id] = last
    return out


async def _probes(cell: Any, sc: Scoring, probes: list, contexts: list, targets: dict, tok: Any, cell_dir: Path,
                  prev: Any):
    from ..models import build as build_model
    from .probes import ask_all

    agent, judge = build_model(cell.agent), build_model(cell.judge)
    outcomes = await ask_all(list(zip(probes, contexts)), agent, judge, tok, cell.scenario.user, sc.grade,
                             sc.pass_score)
    _log_probes(outcomes, targets, cell, tok, cell_dir, prev)
    return outcomes


def _log_probes(outcomes: list, targets: dict, cell: Any, tok: Any, cell_dir: Path, prev: Any) -> None:
    """Probe requests go on the cell's log as kind `probe`, as deltas like every request."""
    verbatim = {m.id: m.hash for m in render_all(tok, cell.scenario, cell.markers)}
    verbatim["system"] = system_message(tok, cell.scenario).hash
    with (cell_dir / "requests.jsonl").open("a", encoding="utf-8") as fh:
        log = RequestLog(fh, cell.name, verbatim)
        if prev is not None:
            log.follow(prev.i, prev.messages)
        for o in outcomes:
            if o.request:
                target = targets[o.probe.id]
                log.write(o.request, kind="probe", tokens=tok.request_size([m.tokens for m in o.request]),
                          t=target.record.get("t"), probe=o.probe.id, passed=o.passed)


__all__ = ["score_cell", "settings", "Scoring", "CHECK_COLUMNS"]
