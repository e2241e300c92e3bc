"""Reading input files as plain data, with bounds: the parsers every scenario, transcript and results
file goes through, so each way a file can fail is one line naming the file and line, never a traceback
or a runaway. YAML aliases are refused in scenarios (and counted before anything is built in results
files), JSON objects remember keys given twice, nesting and numbers have limits, a UTF-8 byte-order
mark is ignored, and line numbers are found when there is something to report."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from bench.errors import BadInput

Path_ = tuple  # a key path such as ("events", 3, "t")

MAX_DEPTH = 64            # scenarios nest a few levels, tool args a few more; deeper is not a session

class Pairs(dict):
    """A mapping as a reader found it, with the keys the file gave more than once (the last value won)."""
    dups: tuple[str, ...] = ()


def bounds(add: Callable[[Path_, str], None], data: Any) -> None:
    """What no scenario needs and later code cannot survive, found in one pass before anything else is
    checked: nesting deeper than MAX_DEPTH, text that UTF-8 cannot store (a lone surrogate a JSON escape
    can make), keys given twice. Each kind is one line, however often it recurs."""
    stack: list[tuple[Path_, Any]] = [((), data)]
    found: dict[str, list[Path_]] = {}
    while stack:
        path, v = stack.pop()
        if isinstance(v, str):
            if not _utf8(v):
                found.setdefault("surrogate", []).append(path)
            continue
        if not isinstance(v, (dict, list)):
            continue
        if len(path) >= MAX_DEPTH:
            found.setdefault("deep", []).append(path)
            continue
        if isinstance(v, list):
            stack.extend((path + (i,), item) for i, item in reversed(list(enumerate(v))))
            continue
        for k in getattr(v, "dups", ()):
            add(path + (k,), f"key '{k}' is given more than once here (the last value would silently win)")
        for k, item in reversed(list(v.items())):
            if isinstance(k, str) and not _utf8(k):
                found.setdefault("surrogate", []).append(path + (k,))
            stack.append((path + (k,), item))
    for kind, paths in found.items():
        more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
        what = (f"nested more than {MAX_DEPTH} levels deep{more}" if kind == "deep" else
                f"text holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not a character and cannot be "
                f"stored as UTF-8{more}")
        add(paths[0], what)


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and objects nest more than `limit` levels (found without recursion)."""
    stack: list[tuple[int, Any]] = [(0, data)]
    while stack:
        depth, v = stack.pop()
        if isinstance(v, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((depth + 1, x) for x in (v.values() if isinstance(v, dict) else v))
    return False


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True



_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """YAML without aliases, and mappings that remember keys given twice. Scenarios have no use for
    anchors and aliases, and an alias repeats its node without copying it: 500 bytes of nested
    aliases ("billion laughs") stand for gigabytes to anything that walks the data."""

    def construct_object(self, node, deep=False):
        if node in self.constructed_objects or node in self.recursive_objects:
            raise yaml.constructor.ConstructorError(
                None, None, "an alias (*name) repeats an anchored node (&name): scenario files do not allow "
                            "YAML anchors and aliases; write the value out", node.start_mark)
        return super().construct_object(node, deep)

    def construct_pairs(self, node):
        data = Pairs()
        yield data
        data.update(self.construct_mapping(node))
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        if len(set(keys)) != len(keys):
            seen: set[str] = set()
            data.dups = tuple(dict.fromkeys(k for k in keys if k in seen or seen.add(k)))


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_pairs)


def _yaml_loader():
    return _BASE_LOADER


MAX_NODES = 1_000_000   # a results file's YAML, aliases expanded: far above any config.yaml we write


def bounded_yaml(text: str) -> Any:
    """YAML whose aliases (an older config.yaml may hold some) expand to at most MAX_NODES nodes: the
    node graph is composed first, with each alias still one shared node, and its expanded size counted
    before anything is built or walked. yaml.YAMLError when it is not YAML or expands past that."""
    root = yaml.compose(text, Loader=_BASE_LOADER)
    if root is None:
        return None
    size: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in size:
            continue
        kids = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else
                node.value if isinstance(node, yaml.SequenceNode) else [])
        if not done:
            if id(node) in {id(n) for n, d in stack if d}:   # a node inside itself: a recursive alias
                raise yaml.YAMLError("a recursive alias")
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        size[id(node)] = min(MAX_NODES + 1, 1 + sum(size.get(id(k), 0) for k in kids))
    if size[id(root)] > MAX_NODES:
        raise yaml.YAMLError(f"its aliases expand to more than {MAX_NODES:,} values")
    return yaml.load(text, Loader=_BASE_LOADER)


def _pairs(pairs: list[tuple[str, Any]]) -> Pairs:
    """A JSON object that remembers keys given twice (json.loads keeps the last silently)."""
    data = Pairs(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        data.dups = tuple(dict.fromkeys(k for k, _ in pairs if k in seen or seen.add(k)))
    return data


def read_text(path: Path) -> str:
    """A file's text; BadInput when it is missing, unreadable or blank. One rule for every reader:
    a UTF-8 byte-order mark at the start is allowed and ignored."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file")
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, not a file")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise BadInput(f"{path}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}")
    if not text.strip():
        raise BadInput(f"{path}: empty file")
    return text


def parse_json(text: str, path: Path | str) -> Any:
    """JSON whose objects remember keys given twice; every way it can fail is one BadInput line naming
    the file and line: syntax, a number Python refuses to read (over 4,300 digits), nesting too deep."""
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}: syntax error: {exc.msg} (column {exc.colno})")
    except RecursionError:
        raise BadInput(f"{path}:{_deep_line(text)}: nested more than {MAX_DEPTH} levels deep")
    except ValueError:              # int('9' * 5000): Python's limit on digits in a number
        raise BadInput(f"{path}:{long_number_line(text)}: a number has more than 4,300 digits, too long to read")


def long_number_line(text: str) -> int:
    m = re.search(r"\d{1000,}", text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _deep_line(text: str) -> int:
    """The line where brackets (outside strings) first nest deeper than MAX_DEPTH."""
    depth, line = 0, 1
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]|\n', text):
        tok = m.group()
        if tok == "\n":
            line += 1
        elif tok in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif tok in "]}":
            depth -= 1
    return line


def parse(path: Path) -> tuple[Any, str]:
    """Return (data, text); raise BadInput for unreadable, empty or malformed files."""
    text = read_text(path)
    if path.suffix == ".json":
        return parse_json(text, path), text
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInput(f"{path}{where}: syntax error: {what}")
    except RecursionError:
        raise BadInput(f"{path}:{_deep_line(text)}: nested more than {MAX_DEPTH} levels deep")
    except ValueError:              # int('9' * 5000)
        raise BadInput(f"{path}:{long_number_line(text)}: a number has more than 4,300 digits, too long to read")
    if data is None:
        raise BadInput(f"{path}: empty file")
    if text.strip() and not text.endswith(("\n", "\r")):
        # YAML reads a file cut after any plain word as whole (`text: Running the che`); every writer of
        # YAML, ours and editors', ends the last line
        raise BadInput(f"{path}:{text.count(chr(10)) + 1}: the file ends in the middle of a line (cut short?); a whole "
                       f"YAML file ends with a newline")
    return data, text


def line_map(text: str, json_text: bool = False) -> dict[Path_, int]:
    """Key path -> 1-based line: from the YAML node tree, or for JSON from its tokens (JSON is YAML
    too, but a JSON file a YAML parser refuses must still get its lines)."""
    if json_text:
        return _json_lines(text)
    try:
        root = yaml.compose(text, Loader=_yaml_loader())
    except (yaml.YAMLError, RecursionError):
        return {}
    lines: dict[Path_, int] = {}
    stack = [((), root)]
    while stack:
        path, node = stack.pop()
        if node is None:
            continue
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = path + (key.value,)
                lines[child] = key.start_mark.line + 1
                stack.append((child, value))
                lines.setdefault(child, key.start_mark.line + 1)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((path + (i,), v) for i, v in enumerate(node.value))
    return lines


def _json_lines(text: str) -> dict[Path_, int]:
    """Key path -> line for a JSON text, from its strings and brackets (a file that parsed as JSON)."""
    lines: dict[Path_, int] = {(): 1}
    stack: list[list[Any]] = []   # [path, is_object, key or index, expecting a key / an element]
    line = 1
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|[\[\]{},:]|\n|[^\s\[\]{},:"]+', text):
        tok = m.group()
        if tok == "\n":
            line += 1
            continue
        top = stack[-1] if stack else None
        if top is not None and top[1] and top[3] and tok.startswith('"'):
            try:
                top[2] = json.loads(tok)
            except ValueError:
                top[2] = tok[1:-1]
            top[3] = False
            lines.setdefault(top[0] + (top[2],), line)
            continue
        if top is not None and not top[1] and top[3] and tok not in "]},":
            lines.setdefault(top[0] + (top[2],), line)
            top[3] = False
        if tok in "[{":
            here = () if top is None else top[0] + (top[2],)
            lines.setdefault(here, line)
            stack.append([here, tok == "{", 0, True])
        elif tok in "]}":
            if stack:
                stack.pop()
        elif tok == "," and top is not None:
            top[3] = True
            if not top[1]:
                top[2] += 1
    return lines


# ---------------------------------------------------------------- loading


def text_of(content: Any) -> str:
    """Message content as text: a string, or a list of parts whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and p.get("type") in ("image", "image_url"):
                parts.append("[image]")
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return json.dumps(content, ensure_ascii=False, default=str)   # default: dataset rows may hold dates


def parse_args(raw: Any) -> dict[str, Any]:
    """Tool-call arguments arrive as a JSON string or a mapping; anything else is kept under 'input'."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):   # not JSON, a 5,000-digit number, nesting past the stack
            return {"input": raw}
        if too_deep(value):                  # later readers and writers of the logs could not survive it
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {} if raw is None else {"input": raw}


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: data}


def json_objects(path: str | Path) -> tuple[list[tuple[int, str, dict]], list[str]]:
    """The JSON objects of a JSON Lines file, each with its line number and `file:line`, and a line per line that is not one
    (blank lines skipped): a hand-written labels file should report every bad line at once, not the first."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    rows: list[tuple[int, str, dict]] = []
    problems: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            problems.append(f"{where}: not JSON: {getattr(exc, 'msg', exc)}")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        rows.append((n, where, obj))
    return rows, problems

