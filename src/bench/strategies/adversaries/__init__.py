"""Reference adversaries: strategies built to game the scores, shipped so a scenario set can be audited.

None makes a model call and none sees the truth. Each keeps no real working context in some
respect and tries to look like the oracle anyway; a scenario set whose scores cannot tell one of
them from `full` cannot be trusted to tell a bad strategy from a good one
(`compaction-bench scenarios audit`). They are configured (conf/strategy/<name>.yaml) but not in
the default run.

- `user_tail`: every user message plus a small tail of the newest turns (targets goal_retention);
- `token_bag`: the same plus a bag of identifier-like tokens from what it dropped (fact_retention);
- `restore_at_compaction`: truncate, but the user's messages come back on the request right after
  each compaction only (constraint_fidelity);
- `stop_compacting`: truncate once, then never again, so requests overflow the window (overflow);
- `label_all`: truncate, with every line of every user-role message under a `[Harness: relay]` label
  (provenance_leakage, paid for on constraint_fidelity and goal_retention);
- `doubt_all`: the same with "Unconfirmed:" opening every line instead of a label (provenance_leakage);
- `queue_guesser`: truncate plus a regex-made last line "Done: #X. Next: #Y." (goal_retention);
- `harvester`: truncate plus a note listing every background request as its own open task
  (provenance_leakage);
- `padded`: truncate behind a constant filler: cheaper and more cached only by knowing less (cost_usd and
  cache_hit_rate, read beside retention).

Exploration adversaries, in no audit (docs/strategies.md): `glossary`, `claims`, `all_done`,
`naive_hedge`, `neither` — imported by module path, not from here.
"""
from bench.strategies.adversaries.doubt_all import DoubtAll
from bench.strategies.adversaries.harvester import Harvester
from bench.strategies.adversaries.label_all import LabelAll
from bench.strategies.adversaries.padded import Padded
from bench.strategies.adversaries.queue_guesser import QueueGuesser
from bench.strategies.adversaries.restore_at_compaction import RestoreAtCompaction
from bench.strategies.adversaries.stop_compacting import StopCompacting
from bench.strategies.adversaries.token_bag import TokenBag
from bench.strategies.adversaries.user_tail import UserTail

__all__ = ["UserTail", "TokenBag", "RestoreAtCompaction", "StopCompacting", "LabelAll", "DoubtAll", "QueueGuesser",
           "Harvester", "Padded"]
