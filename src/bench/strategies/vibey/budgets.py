"""Every size limit of the checkpoint, scaled to the window.

The seed's numbers hold for windows of 192,000 tokens and more and shrink in
proportion below. `floor` keeps a scaled budget from collapsing to a handful
of tokens on toy windows (700-token smoke scenarios), where a proportional
cap of 4 tokens would make every checkpoint invalid by construction.
"""
from __future__ import annotations

from dataclasses import dataclass

SECTIONS = ("I am here", "Goals", "Key decisions", "Lessons")


@dataclass(frozen=True)
class Budgets:
    caps: dict[str, int]        # mind section -> token cap
    memo_each: int
    memo_total: int
    recent: int                 # verbatim tail after a checkpoint
    skill_each: int
    skills_total: int
    skills_max: int
    files_modified: int
    files_read: int
    scene_min: int
    scene_max: int


def budgets(window: int, trigger: int, *, full_window: int = 192_000, caps: dict[str, int] | None = None,
            memo_each: int = 300, memo_total: int = 3000, recent: int = 20_000, skill_each: int = 5000,
            skills_total: int = 25_000, skills_share: float = 0.1, skills_max: int = 20,
            files_modified: int = 10, files_read: int = 5, scene_min: int = 30, scene_max: int = 2000,
            floor: int = 32) -> Budgets:
    scale = min(1.0, window / full_window)

    def scaled(n: int) -> int:
        return max(min(n, floor), round(n * scale))

    caps = dict(zip(SECTIONS, (1000, 2000, 1500, 1500))) | (caps or {})
    return Budgets(caps={k: scaled(v) for k, v in caps.items()}, memo_each=scaled(memo_each),
                   memo_total=max(scaled(memo_total), 3 * min(floor, memo_each)),
                   recent=min(recent, trigger // 4), skill_each=skill_each,
                   skills_total=int(min(skills_total, window * skills_share)), skills_max=skills_max,
                   files_modified=files_modified, files_read=files_read, scene_min=scene_min,
                   scene_max=max(scaled(scene_max), scene_min * 2))
