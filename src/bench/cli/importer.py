"""`compaction-bench import FORMAT PATH --out FILE`: turn a real transcript into a scenario."""
from __future__ import annotations

from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.scenarios.importers import FORMATS, HF_PREFIX, import_transcripts
from bench.scenarios.importers.bulk import import_dataset, import_folder
from bench.scenarios.importers.review import review

def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench import", description="Turn a real transcript into a scenario.")
    p.add_argument("format", nargs="?", choices=list(FORMATS), help="the transcript format (with --dataset: every "
                                                                    "row's; default there: each row's own)")
    p.add_argument("path", nargs="?", help=f"the transcript file, a folder of them (every session of every file), or "
                                           f"{HF_PREFIX}OWNER/NAME for a Hugging Face dataset")
    p.add_argument("--dataset", metavar="NAME_OR_PATH", help="import every row of a dataset of agent trajectories "
                   "(a Hugging Face id or a local dataset folder, read with 'datasets'), one scenario each, into the "
                   "--out directory")
    p.add_argument("--out", required=True, help="scenario file (.json or .yaml); a directory with --all")
    pick = p.add_mutually_exclusive_group()
    pick.add_argument("--record", type=int, metavar="N", help="which session of a multi-session file (0-based)")
    pick.add_argument("--all", action="store_true", help="write every session, one scenario each, into the --out "
                                                         "directory")
    p.add_argument("--window", type=int, help="context window in tokens (default: a quarter of the session, min 4096)")
    p.add_argument("--user", default="User", help="the human user's display name (default: User)")
    p.add_argument("--id", help="scenario id (default: from the file name); with --all, a prefix")
    p.add_argument("--split", default="train", help=f"dataset split for {HF_PREFIX} ids (default: train)")
    p.add_argument("--licence", "--license", default="unknown", help="the licence the transcript is under, recorded in "
                                                                      "the scenario's provenance (default: unknown)")
    p.add_argument("--min-tokens", type=int, default=0, metavar="N", help="with a folder or --all: leave out sessions "
                                                                          "shorter than N tokens")
    p.add_argument("--review", action="store_true", help="also write FILE.review.md beside each scenario: every "
                                                          "derived item with its confidence and source line")
    a = p.parse_args(argv)
    problems: list[str] = []
    if a.dataset is not None and (a.path is not None or a.record is not None or a.all or a.id):
        raise BadInput("--dataset: give the dataset alone (no PATH, --record, --all or --id): every row is imported")
    if a.dataset is None and a.path is None:
        raise BadInput("import: give FORMAT and PATH (a file, a folder or hf:OWNER/NAME), or --dataset NAME_OR_PATH")
    if a.window is not None and a.window <= 0:
        raise BadInput(f"--window: must be a positive integer, got {a.window}")
    if a.dataset is not None or Path(a.path).is_dir():
        kw = dict(min_tokens=a.min_tokens, window=a.window, user=a.user, licence=a.licence)
        bulk = (import_dataset(a.dataset, Path(a.out), fmt=a.format, split=a.split, **kw) if a.dataset is not None
                else import_folder(a.format, Path(a.path), Path(a.out), **kw))
        written, renamed, problems = bulk.written, bulk.renamed, bulk.problems
        print(f"{a.dataset or a.path}: {bulk.files} {'row' if a.dataset else 'file'}(s), {len(written)} session(s) "
              "imported" + (f", {bulk.short} shorter than {a.min_tokens} tokens left out" if bulk.short else "")
              + (f", {len(problems)} problem(s) below" if problems else ""))
    else:
        written, renamed = import_transcripts(a.format, a.path, Path(a.out), record=a.record, everything=a.all,
                                              window=a.window, user=a.user, id=a.id, split=a.split,
                                              licence=a.licence, min_tokens=a.min_tokens)
    if renamed:
        print(f"note: {renamed} session(s) share an id with another; each gets its own id and file "
              f"(suffix -2, -3, ... in file order)")
    for w in written:
        data = w.data
        roles = {r: sum(e["role"] == r for e in data["events"]) for r in ("user", "assistant", "tool", "background")}
        print(f"wrote {w.target}: {data['id']}, {len(data['events'])} events "
              f"({', '.join(f'{k} {v}' for k, v in roles.items())}), window {data['window']}, truth: "
              f"{len(data['truth'].get('constraints', []))} constraints, {len(data['truth'].get('facts', []))} facts")
        comps = data.get("compactions", [])
        if comps:
            print(f"  {len(comps)} recorded compaction(s) of the source harness (strategy 'recorded' replays them)")
        if a.review:
            page = w.target.with_name(w.target.name + ".review.md")
            try:
                page.write_text(review(data), encoding="utf-8")
            except OSError as exc:
                raise BadInput(f"{page}: cannot write: {exc.strerror or exc}")
            print(f"  review: {page}")
        for note in w.notes:
            print(f"  note: {w.origin}: {note}")
    if problems:
        raise BadInput(problems)   # after the others are written: one broken log does not cost the rest
    return 0
