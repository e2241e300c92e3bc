"""The `compaction-bench` command. Each subcommand lives in its own module of this package, imported on
use, so `--help` stays fast (no litellm, pandas, matplotlib or Hydra on that path). Only this package
parses arguments, prints and chooses exit codes; the layers below return values.

Exit codes: 0 ok, 1 a gate or comparison failed, 2 bad input or usage, 130 interrupted (SIGINT, Ctrl-C),
143 stopped by SIGTERM (what `kill PID`, `timeout` and CI runners send): both keep finished cells.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import dataclass
from importlib import import_module

from bench import __version__
from bench.errors import BadInput, Terminated
from bench.runner.config import did_you_mean


@dataclass(frozen=True)
class Command:
    module: str          # bench.cli.<module>.main(argv) -> exit code
    synopsis: str        # its lines in `compaction-bench --help` (and the docs, tests/test_docs.py)


COMMANDS = {
    "run": Command("run", """\
  run [OVERRIDES...] [-m]          replay scenarios x strategies x writers -> results/<run-id>/
                                   overrides are Hydra style: strategies=[naive,vibey] window=32000
                                   writer.model=openai/gpt-4o-mini scenarios=[path/or/glob] out=DIR
                                   -m sweeps comma lists into one run: -m writer.model=offline,openai/x
                                   repeats=K runs each cell K times (seeds); shard=I/N runs shard I of N"""),
    "scenarios": Command("scenarios", """\
  scenarios list [PATH...]         the scenarios with their size and window
  scenarios show ID                one scenario: events, truth, probes
  scenarios validate PATH...       check scenario files; one line per problem
  scenarios generate [OPTIONS]     write the generated scenario library
  scenarios audit [PATH...] [--min-gap X] [--by-scenario]
                                   run the oracle, truncate and the reference adversaries; exit 1
                                   when the set cannot tell an adversary from the oracle"""),
    "import": Command("importer", """\
  import FORMAT PATH --out FILE    turn a transcript (or a folder of them) into scenarios, keeping the
                                   harness's own compactions (openai-chat | swe-agent | openhands |
                                   claude-code | codex | atif)
  import --dataset NAME --out DIR  every row of a dataset of trajectories (Hub id or local folder)"""),
    "score": Command("score", """\
  score RUN_DIR                    re-score a run from its logs: fresh summary.csv, checks.csv and report"""),
    "calibrate": Command("calibrate", """\
  calibrate LABELS.jsonl [--judge|--reader [-o judge.model=M]...] [--min-kappa K] [--format text|json]
                                   score a labelled reading corpus with the scorer: per metric the
                                   confusion matrix, Cohen's kappa, precision, recall, disagreements;
                                   --judge: the probe judge on labelled answers (kappa, coverage);
                                   --reader: a model answers each label's question in the scorer's place"""),
    "report": Command("report", """\
  report RUN_DIR                   re-render report.md / report.html of a run"""),
    "view": Command("view", """\
  view RUN_DIR [--cell ID] [--open]
                                   write RUN_DIR/view.html (+ view/): a grid of every cell's scores;
                                   per cell its contexts, each compaction's diff and each truth item
                                   marked kept / lost / stale / leaked; --cell: view-<ID>.html"""),
    "compare": Command("compare", """\
  compare BASE_DIR [NEW_DIR] [--writers A,B] [--gate FILE] [--max-drop X] [--threshold [TAG:]METRIC=X]
          [--noise-aware] [--all-cells] [--format text|json|junit|markdown] [--output FILE]
                                   the CI gate: exit 1 when any cell or any strategy's mean got worse
                                   than the gate allows (95% intervals and verdicts beside each change);
                                   --writers A,B: writer A against writer B, of one run or of two"""),
    "baseline": Command("baseline", """\
  baseline [OVERRIDES...] --out DIR
                                   run and keep a compact, committable baseline for compare"""),
    "merge": Command("merge", """\
  merge DIR... --out DIR           join the folders of a sharded run (shard=I/N) into one run folder"""),
    "init": Command("init", """\
  init [DIR] [--exec]              write a starter strategy, its config, a scenario and a CI
                                   workflow into your repository; prints the commands to run it"""),
    "cache": Command("cache", """\
  cache stats|clear [--dir DIR] [--model M]
                                   what the response cache of real models holds; empty it (or
                                   one model's answers) so the next run asks again"""),
}

USAGE = f"""\
usage: compaction-bench COMMAND [ARGS]

Replay long agent sessions through context-compaction strategies and score what survives.

commands:
{chr(10).join(c.synopsis for c in COMMANDS.values())}

exit codes: 0 ok, 1 a gate or comparison failed, or a run in which something failed (a cell,
            every call of a model, the report), 2 bad input or usage, 130 Ctrl-C, 143 SIGTERM
            (both keep the finished cells: run again with the same out= to resume)
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        return guarded(lambda _: _usage(0 if argv else 2), [])
    if argv[0] in ("-V", "--version"):
        print(f"compaction-bench {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"compaction-bench: unknown command '{command}'{did_you_mean(command, COMMANDS)} "
              f"(see compaction-bench --help)", file=sys.stderr)
        return 2
    return guarded(lambda args: import_module(f"bench.cli.{COMMANDS[command].module}").main(args), rest)


def _usage(code: int) -> int:
    print(USAGE, file=sys.stdout if code == 0 else sys.stderr)
    return code


def _terminate(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)    # a second one does not interrupt the cleanup
    raise Terminated


def guarded(func, argv: list[str]) -> int:
    """Run an entry point the way every command runs: bad input is one line each and exit 2, never a
    traceback; a closed pipe ends quietly, Ctrl-C and SIGTERM in one line (130, 143).
    `python -m bench.X` modules call it too."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main else None
    try:
        return int(func(argv) or 0)
    except BadInput as exc:
        for line in exc.problems:   # one line each, whatever newlines a file's values hold
            print(str(line).replace("\r", "\\r").replace("\n", "\\n"), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `compaction-bench ... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except KeyboardInterrupt as exc:
        term = isinstance(exc, Terminated)
        print(f"{'stopped (SIGTERM)' if term else 'interrupted'}; finished cells are kept (run again with the same "
              f"out= to resume)", file=sys.stderr)
        return 143 if term else 130
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
