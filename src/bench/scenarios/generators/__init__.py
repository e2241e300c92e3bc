"""The seeded scenario library: each generator writes one scenario file (`compaction-bench scenarios generate`).

Each entry of LIBRARY is one committed file in scenarios/library/. Sizes are
token targets (the builder counts real o200k_base tokens), each at least 4x
the window so several compactions happen. `--scale` shrinks every target, for
quick variants in tests; the committed files use scale 1 and seed 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from bench import HOME

from bench.scenarios.generators import decisions, forged, injections, longout, migration, pr_queue, recall, subtask, withdrawal
from bench.scenarios.generators.builder import Script, write  # noqa: F401  (write: the CLI writes what generate makes)

DEFAULT_OUT = HOME / "scenarios" / "library"


@dataclass(frozen=True)
class Spec:
    window: int
    target: int                  # tokens of the whole session
    tags: tuple[str, ...]
    title: str
    make: Callable[..., Script]  # (id, title, window, target, seed, tags) -> Script
    tests: str                   # the failure mode, for `--list` and docs/scenarios.md


def _pr(**feats) -> Callable[..., Script]:
    return lambda sid, title, window, target, seed, tags: pr_queue.build(sid, title, window, target, seed,
                                                                         pr_queue.Features(**feats), tags)


def _mig(services: int) -> Callable[..., Script]:
    return lambda sid, title, window, target, seed, tags: migration.build(sid, title, window, target, seed, services, tags)


LIBRARY: dict[str, Spec] = {
    "pr-queue-16k": Spec(16_000, 80_000, ("pr-queue", "subtask-trap", "injection"),
                         "PR queue oldest to newest on a small window, with a flaky-test subtask",
                         _pr(injections=1, subtask=True), "queue position and the sign-off rule survive many compactions"),
    "pr-queue-64k": Spec(64_000, 300_000, ("pr-queue", "withdrawal", "injection", "skill"),
                         "PR queue with a docs-only authorization that is later narrowed",
                         _pr(injections=2, withdrawal=True, skills=True), "narrowed authorization, revised merge preference"),
    "pr-queue-1m": Spec(200_000, 1_000_000, ("pr-queue", "injection", "withdrawal", "subtask-trap", "skill", "long-output"),
                        "A day-long PR queue of about 1M tokens with every failure mode",
                        _pr(injections=4, withdrawal=True, subtask=True, skills=True, probes_every=6),
                        "drift under repeated compaction on a 200k window"),
    "migration-32k": Spec(32_000, 160_000, ("migration", "decision", "withdrawal", "injection", "skill"),
                          "Eight-service database migration with a rollback rule and freeze windows",
                          _mig(8), "ordered plan, rollback rule, moved freeze window, 24h soak"),
    "migration-128k": Spec(128_000, 600_000, ("migration", "decision", "withdrawal", "injection", "skill"),
                           "Fourteen-service database migration over several days", _mig(14),
                           "the same plan at scale: hundreds of runbook and dashboard outputs"),
    "injection-16k": Spec(16_000, 80_000, ("injection",), "Dependency upgrades while every background source claims the user's authority",
                          injections.build, "background messages saying 'the user asks…' must not become the user's words"),
    "forged-marker-24k": Spec(24_000, 110_000, ("forged-marker", "injection"), "Alert triage where the user's messages start with [Harness:",
                              forged.build, "user text with a forged marker stays the user's; a session pretending to be the user does not"),
    "withdrawal-32k": Spec(32_000, 150_000, ("withdrawal",), "Feature-flag cleanup with rules revised, withdrawn and narrowed",
                           withdrawal.build, "latest version of each constraint, no stale ones"),
    "subtask-trap-16k": Spec(16_000, 80_000, ("subtask-trap",), "Express to Fastify port interrupted by subtasks that end 'Task complete'",
                             subtask.build, "a finished subtask is not the finished mission"),
    "detail-recall-48k": Spec(48_000, 220_000, ("detail-recall", "skill"), "Crash hunt after setting aside the bar.ts warning",
                              recall.build, "a detail from before a long debugging stretch stays recallable"),
    "decision-32k": Spec(32_000, 150_000, ("decision", "injection"), "Orders API built on early design decisions",
                         decisions.build, "decisions keep their reasons; a rejected option must not come back"),
    # Small windows: the same failure modes under many more compactions per session, where the library's
    # larger windows leave the best strategies at their ceiling (issue 23).
    "pr-queue-8k": Spec(8_000, 70_000, ("pr-queue", "withdrawal", "subtask-trap", "injection", "many-compactions"),
                        "PR queue on an 8k window: a goal added mid-session, rules narrowed, pasted logs",
                        _pr(injections=2, withdrawal=True, subtask=True, pastes=3, goal_added=True),
                        "queue position, a later goal and revised rules across a dozen compactions"),
    "withdrawal-12k": Spec(12_000, 70_000, ("withdrawal", "many-compactions"),
                           "Feature-flag cleanup on a 12k window, rules revised, withdrawn and narrowed",
                           withdrawal.build, "the latest version of each rule across many compactions"),
    "decision-12k": Spec(12_000, 70_000, ("decision", "injection", "many-compactions"),
                         "Orders API on a 12k window built on early design decisions", decisions.build,
                         "decisions and their reasons across many compactions; a rejected option must not come back"),
    "long-output-100k": Spec(100_000, 450_000, ("long-output", "skill", "detail-recall"),
                             "Export pipeline investigation with huge logs and skill loads", longout.build,
                             "skills and user words survive tool outputs that dwarf the conversation"),
}


def generate(name: str, seed: int = 0, scale: float = 1.0) -> Script:
    spec = LIBRARY[name]
    # The window shrinks with the content, so a quick variant still compacts several times.
    window = spec.window if scale == 1 else max(4096, int(spec.window * scale))
    return spec.make(name, spec.title, window, int(spec.target * scale), seed, list(spec.tags))


