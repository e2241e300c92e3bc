"""Which cells a run has: every sweep combination of the composed config, as `Cell`s.

A cell is one scenario x strategy x writer x window x seed (plus the swept settings that set it apart).
Everything a cell needs is resolved here, before anything runs, so a bad strategy config or a window
too small for a scenario fails the run at once with one line per cause.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.harness.model import ModelConfig
from bench.harness.messages import system_message
from bench.harness.strategy import Session, Strategy, default_reserve, trigger_limit
from bench.tokens import Tokenizer
from bench.models.cache import responses_dir
from bench.results.store import latest_run
from bench.runner.config import compose, config_dirs, config_file, did_you_mean, expand_sweeps, scenario_bases
from bench.runner.settings import Settings, parse
from bench.scenarios import loader
from bench.scenarios.model import Scenario
from bench.scenarios.validate import room
from bench.scoring import settings
from bench.tokens import encoding_for


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    strategy: str
    strategy_cfg: dict[str, Any]
    writer: ModelConfig
    window: int
    seed: int
    markers: bool = True
    reserve_output: int | None = None
    margin: int | None = None
    encoding: str = "o200k_base"
    agent: ModelConfig = field(default_factory=ModelConfig)
    judge: ModelConfig = field(default_factory=ModelConfig)
    scoring: Any = None   # bench.scoring.Scoring: cache profile, price model, probe settings
    variant: str = ""     # the swept settings (other than writer, window, seed) that set this cell apart
    oracle: bool = False  # its strategy class is one the run's config names in `oracles:`

    @property
    def label(self) -> str:
        """The strategy column: the strategy's name, plus its variant when a sweep made several."""
        return f"{self.strategy}[{self.variant}]" if self.variant else self.strategy

    @property
    def key(self) -> tuple[str, ...]:
        return (self.scenario.id, self.label, self.writer.model, str(self.window), str(self.seed))

    @property
    def name(self) -> str:
        return "/".join(self.key)

    @property
    def slug(self) -> str:
        return hashlib.sha1(self.name.encode()).hexdigest()[:12]


def model_config(node: Any, seed: int, cache_dir: str | None = None, refresh: bool = False) -> ModelConfig:
    from omegaconf import OmegaConf

    data = OmegaConf.to_container(node, resolve=True) if not isinstance(node, dict) else dict(node)
    known = {f for f in ModelConfig.__dataclass_fields__}
    extra = {k: v for k, v in data.items() if k not in known}
    own = data.get("seed")   # a role's own seed holds across repeats: agent.seed=0,1 crosses agent and writer seeds
    return ModelConfig(**{k: v for k, v in data.items() if k in known and k not in ("extra", "cache_dir", "refresh", "seed")},
                       extra={**data.get("extra", {}), **extra}, seed=seed if own is None else own,
                       cache_dir=data.get("cache_dir", cache_dir), refresh=bool(data.get("refresh", refresh)))


def strategy_config(cfg: Any, name: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    if name in cfg.strategy:
        return OmegaConf.to_container(cfg.strategy[name], resolve=True)
    own = config_file("strategy", name, cfg)   # a file in a strategy/ folder works without a defaults entry
    if own is not None:
        return OmegaConf.to_container(OmegaConf.load(own), resolve=True)
    if "." in name:
        return {"_target_": name}
    known = sorted({*cfg.strategy, *(p.stem for d in config_dirs(cfg) for p in (d / "strategy").glob("*.yaml"))})
    raise BadInput(f"strategies: unknown strategy '{name}'{did_you_mean(name, known)} (configured: {', '.join(known)}; "
                   f"a file strategy/{name}.yaml in conf/ or your config_dir, or a dotted class path)")


def make_strategy(name: str, spec: dict[str, Any]) -> Strategy:
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    spec = dict(spec)
    earlier = spec.pop("trigger_at", None)
    if earlier is not None and (isinstance(earlier, bool) or not isinstance(earlier, (int, float)) or earlier <= 0):
        raise BadInput(f"strategy.{name}.trigger_at: {earlier!r} is not a share of the window (0-1] or a token count")
    try:
        strategy = instantiate(spec, _convert_="all")
    except (InstantiationException, TypeError, ValueError, ImportError) as exc:
        cause = exc.__cause__ or exc
        raise BadInput(f"strategy.{name}: cannot build {spec.get('_target_')}: {' '.join(str(cause).split())}")
    if not isinstance(strategy, Strategy):
        raise BadInput(f"strategy.{name}: {spec.get('_target_')} is not a bench.strategy.Strategy")
    strategy.name = name
    if earlier is not None:
        if type(strategy).prepare is not Strategy.prepare:
            raise BadInput(f"strategy.{name}.trigger_at: {spec.get('_target_')} decides when it compacts itself; "
                           "trigger_at applies to the built-in strategies")
        strategy.earlier = earlier
    return strategy


def plan(overrides: list[str], multirun: bool) -> tuple[list[Cell], Any, list[Any]]:
    """Compose every sweep combination and list the cells to run."""
    combos = expand_sweeps(overrides) if multirun else [overrides]
    cfgs = [compose(c) for c in combos]
    variants = sweep_labels(combos)
    cells: list[Cell] = []
    cache: dict[tuple, list[Scenario]] = {}
    for cfg, variant in zip(cfgs, variants):
        s = parse(cfg)
        patterns, names = s.scenarios, s.strategies
        if tuple(patterns) not in cache:
            cache[tuple(patterns)] = loader.load_all(loader.expand(patterns, base=scenario_bases(cfg)))
        cache_dir = responses_dir(s.responses.enabled, s.responses.dir)
        refresh = s.responses.refresh
        scoring = settings(_plain(cfg.get("cache")) or {}, s.price.model, s.probes, s.continuation.steps)
        seeds = range(s.seed, s.seed + s.repeats)   # repeats: one cell per seed
        writers = {(name, seed): _writers(model_config(cfg.writer, seed, cache_dir, refresh), cfg, s, name)
                   for name in names for seed in seeds}
        for scenario in cache[tuple(patterns)]:
            for name in names:
                for i in range(len(writers[name, seeds[0]])):
                    for seed in seeds:
                        w = writers[name, seed][i]
                        cells.append(Cell(scenario, name, strategy_config(cfg, name), w,
                                          s.window or scenario.window, seed, s.markers, s.reserve_output,
                                          s.margin, s.encoding or encoding_for(w.model),
                                          model_config(cfg.agent, seed, cache_dir, refresh),
                                          model_config(cfg.judge, seed, cache_dir, refresh), scoring, variant,
                                          strategy_config(cfg, name).get("_target_") in s.oracles))
    _check_room(cells)
    built = {c.label: make_strategy(c.strategy, c.strategy_cfg) for c in cells}   # a bad config fails before anything runs
    _check_recorded(cells, built)
    _check_earlier(cells)
    unique: dict[tuple, Cell] = {}
    for c in cells:
        unique.setdefault(c.key, c)
    return list(unique.values()), cfgs[0], cfgs


def _plain(node: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node


def _writers(writer: ModelConfig, cfg: Any, s: Settings, name: str) -> list[ModelConfig]:
    """The writer, plus its stress profiles (config `stress:`) when it is the plain offline writer and
    the strategy calls a writer: a run shows how much a design depends on a faithful writer. (Oracles are
    the run's `oracles:` classes: the config says which, never the strategy.)"""
    profiles = s.stress
    if writer.model != "offline" or not profiles:
        return [writer]
    if not getattr(make_strategy(name, strategy_config(cfg, name)), "calls_writer", False):
        return [writer]
    return [writer, *(replace(writer, model=f"offline:{p}") for p in profiles)]


def _check_recorded(cells: list[Cell], built: dict[str, Strategy]) -> None:
    """A strategy that replays the source harness's compactions (`recorded`) on a scenario that records none
    would score nothing of its own: one line per such strategy, naming the scenarios."""
    lines = []
    for label, strategy in built.items():
        bare = sorted({c.scenario.id for c in cells if c.label == label and not c.scenario.compactions})
        if strategy.needs_recorded and bare:
            more = f" and {len(bare) - 3} more" if len(bare) > 3 else ""
            lines.append(f"strategies: '{label}' replays the source harness's own compactions, but scenario "
                         f"{', '.join(bare[:3])}{more} records none (import a session whose harness compacted: "
                         "docs/scenarios.md, Importers)")
    if lines:
        raise BadInput(lines)


def _check_room(cells: list[Cell]) -> None:
    """A window= (or reserve_output= / margin=) that leaves no room for any request is bad input, one line
    per setting: every request would overflow whatever the strategy did, and score as lost."""
    seen: set[tuple] = set()
    found: dict[tuple, list[str]] = {}
    for c in cells:
        key = (c.scenario.id, c.window, c.reserve_output, c.margin, c.encoding)
        if key not in seen:
            seen.add(key)
            why = room(c.scenario, c.window, c.reserve_output, c.margin, c.encoding)
            if why:
                found.setdefault((c.window, c.reserve_output, c.margin), []).append(f"scenario {c.scenario.id}: {why}")
    lines = [f"window: {whys[0]}" + (f" (and {len(whys) - 1} more scenarios)" if len(whys) > 1 else "")
             for whys in found.values()]
    if lines:
        raise BadInput(lines)


def _check_earlier(cells: list[Cell]) -> None:
    """A `trigger_at` later than the strategy's own trigger at a cell's window is refused, one line: it may
    only bring compaction earlier (a later one would send requests past the model's input limit)."""
    seen: set[tuple] = set()
    for c in cells:
        at = c.strategy_cfg.get("trigger_at")
        key = (c.label, c.window, c.scenario.id)
        if at is None or key in seen:
            continue
        seen.add(key)
        strategy = make_strategy(c.strategy, c.strategy_cfg)
        tok = Tokenizer(c.encoding)
        reserve, margin = default_reserve(c.window)
        reserve, margin = c.reserve_output or reserve, c.margin or margin
        strategy.begin(Session(scenario=c.scenario.id, user=c.scenario.user, window=c.window,
                               system=system_message(tok, c.scenario), tok=tok, writer=None,
                               limit=trigger_limit(c.window, reserve, margin), reserve_output=reserve, margin=margin))
        own, early = strategy.trigger(), strategy.early()
        if early > own:
            raise BadInput(f"strategy.{c.strategy}.trigger_at: {at} is {early} tokens at window {c.window} "
                           f"({c.scenario.id}), later than {c.strategy}'s own trigger of {own}: trigger_at may "
                           "only bring compaction earlier")


def sweep_labels(combos: list[list[str]]) -> list[str]:
    """Per sweep combination, the swept settings that the summary's key columns do not already show."""
    shown = {"writer.model", "window", "seed", "scenarios", "strategies", "suite", "out"}
    parsed = [dict(o.lstrip("+~").split("=", 1) for o in combo if "=" in o) for combo in combos]
    keys = [k for k in dict.fromkeys(k for p in parsed for k in p)
            if k not in shown and len({p.get(k) for p in parsed}) > 1]
    return [",".join(f"{k}={p.get(k, '')}" for k in keys) for p in parsed]


def out_dir(cfg: Any) -> Path:
    if cfg.out:
        return Path(str(cfg.out))
    if cfg.get("resume"):
        latest = latest_run()
        if latest is None:
            raise BadInput("resume: no earlier run under results/ to resume (give out=DIR)")
        return latest
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("results") / f"{stamp}-{secrets.token_hex(2)}"  # two runs in one second stay apart
