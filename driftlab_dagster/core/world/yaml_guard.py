"""Reading a world file's YAML with every bound checked before any Python object is built.

A file that is valid YAML can still hang or crash a loader: an alias bomb ("billion laughs": a few hundred
bytes that expand to hundreds of millions of strings), nesting deep enough to overflow the stack, a value
the constructors choke on (a timestamp such as 2026-13-45, an integer of 5,000 digits), a lone UTF-16
surrogate. `load_yaml` refuses each of them with one `WorldFileError` line that names the field and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import yaml

from . import WorldFileError

MAX_YAML_NODES = 1_000_000  # YAML values, counted with every alias expanded: stops "billion laughs"
MAX_YAML_DEPTH = 64  # nested collections (Tessaly needs 8); the composer recurses once per level


def dotted(loc: list[Any]) -> str:
    """A field path as a person writes it: `pages[3].body`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out



if TYPE_CHECKING:  # what the mixin is mixed into, so that super().construct_object is known
    _Constructor = yaml.constructor.SafeConstructor
else:
    _Constructor = object


class _GuardedConstruction(_Constructor):
    """Turns a value the YAML constructors choke on (a timestamp such as 2026-13-45, an integer of 5,000
    digits) into a YAML error at that value's line, instead of a bare ValueError from deep inside."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, ArithmeticError) as e:
            reason = str(e)
            if "integer string conversion" in reason:  # Python's guard against quadratic int parsing
                reason = "the number has thousands of digits"
            raise yaml.constructor.ConstructorError(None, None, f"cannot read this value: {reason}",
                                                    node.start_mark) from None


class _PureLoader(_GuardedConstruction, yaml.SafeLoader):
    pass


# libyaml parses and composes in C, many times faster on large generated worlds; construction (and so every
# value) is the same Python code. Its error messages differ, so errors are re-read with the pure loader.
_FastLoader: type | None = None
if yaml.__with_libyaml__:
    class _FastLoader(_GuardedConstruction, yaml.CSafeLoader):  # type: ignore[no-redef]  # fills the Optional above
        pass


def load_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The document's Python value and its node graph (for line numbers). Nesting depth and the number of
    values, aliases expanded, are checked before anything is built."""
    loader = _FastLoader or _PureLoader
    try:
        return _compose_and_construct(text, source, loader)
    except (yaml.YAMLError, UnicodeEncodeError) as e:
        error: Exception = e
    if loader is not _PureLoader:
        # libyaml words its errors differently and sometimes places them a line later; the pure loader's
        # wording and line are the documented ones (and the tests'), so the same error is found with it.
        # Only a broken file pays for this second, slower read.
        try:
            _compose_and_construct(text, source, _PureLoader)
        except yaml.YAMLError as pure:
            error = pure
    raise WorldFileError(f"{source}: not valid YAML at {_yaml_problem(error, text)}") from None


def _yaml_problem(e: Exception, text: str) -> str:
    """'line L, column C: what', from any YAML error."""
    if isinstance(e, yaml.reader.ReaderError):
        # A character YAML refuses (a control character, a lone surrogate): it has a position, not a mark.
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        return f"line {line}, column {column}: {str(e).splitlines()[0]}"
    if isinstance(e, UnicodeEncodeError):  # libyaml's form of the same thing, when the pure loader agreed
        line = text.count("\n", 0, e.start) + 1
        return f"line {line}: {e.reason} ({text[e.start]!a})"
    mark = getattr(e, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"{where}: {problem}"


def _compose_and_construct(text: str, source: str, loader_class: type) -> tuple[Any, yaml.Node | None]:
    aliases = _prescan(text, source, loader_class)
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if aliases:  # without aliases the node graph is the tree the prescan already measured
            _check_expansion(node, source)
        try:
            return loader.construct_document(node), node
        except yaml.constructor.ConstructorError as e:
            # Values are built by the same Python code under either parser: no need to ask the pure one.
            mark = e.problem_mark or e.context_mark
            where = f"{_field_at(node, mark)} (line {mark.line + 1})" if mark else "(top level)"
            raise WorldFileError(f"{source}: {where}: {e.problem or e.context}") from None
    finally:
        loader.dispose()


def _field_at(root: yaml.Node, mark: yaml.Mark) -> str:
    """The dotted path of the value that starts at `mark`, found by walking the node graph (error path only)."""
    parents: dict[int, tuple[yaml.Node, Any]] = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if (node.start_mark.line, node.start_mark.column) == (mark.line, mark.column):
            path: list[Any] = []
            while id(node) in parents:
                node, label = parents[id(node)]
                path.append(label)
            return dotted(path[::-1]) or "(top level)"
        if isinstance(node, yaml.MappingNode):
            labelled = [(child, key.value if isinstance(key, yaml.ScalarNode) else "?")
                        for key, value in node.value for child in (key, value)]
        elif isinstance(node, yaml.SequenceNode):
            labelled = list(zip(node.value, range(len(node.value))))
        else:
            labelled = []
        for child, label in labelled:
            if id(child) not in parents and child is not root:
                parents[id(child)] = (node, label)
                todo.append(child)
    return "(top level)"


_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class _Open:
    """A collection the prescan is inside, and which of its children it is reading (for messages)."""

    is_mapping: bool
    label: Any = None  # the key (mapping) or index (sequence) of the current child
    reading_key: bool = True  # mapping: the next node is a key
    count: int = 0  # sequence: children seen


def _prescan(text: str, source: str, loader_class: type) -> int:
    """Walk the event stream (iteratively, keeping no nodes) and refuse nesting deeper than MAX_YAML_DEPTH
    (the composer recurses per level: 10,000 '[' are a RecursionError, or a crash in libyaml's composer)
    and more than MAX_YAML_NODES values (memory). Returns the number of aliases, which it cannot expand."""
    stack: list[_Open] = []
    nodes = aliases = 0
    for event in yaml.parse(text, Loader=loader_class):
        if isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue  # stream and document events
        if stack:  # the event is the next child of the innermost collection: label it for messages
            parent = stack[-1]
            if not parent.is_mapping:
                parent.label, parent.count = parent.count, parent.count + 1
            elif parent.reading_key:
                parent.label = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                parent.reading_key = False
            else:
                parent.reading_key = True
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            continue
        nodes += 1
        if nodes > MAX_YAML_NODES:
            raise _stream_error(source, stack, event, f"the file holds more than {MAX_YAML_NODES:,} YAML values "
                                "(MAX_YAML_NODES); split the world or generate a smaller one")
        if isinstance(event, yaml.ScalarEvent):
            # The pure loader accepts a "\ud800" escape; such a string cannot be written out as UTF-8 later.
            if not event.value.isascii() and _SURROGATE.search(event.value):
                raise _stream_error(source, stack, event, "the text contains half of a UTF-16 surrogate pair "
                                    "(an escape such as \\ud800); write the character itself")
            continue
        if len(stack) >= MAX_YAML_DEPTH:
            raise _stream_error(source, stack, event, f"values nest more than {MAX_YAML_DEPTH} levels deep "
                                "(MAX_YAML_DEPTH; a world needs about 8); look for unclosed brackets")
        stack.append(_Open(is_mapping=isinstance(event, yaml.MappingStartEvent)))
    return aliases


def _stream_error(source: str, stack: list[_Open], event: yaml.Event, message: str) -> WorldFileError:
    path = [collection.label for collection in stack]
    field = dotted(path[:6]) + ("..." if len(path) > 6 else "") or "(top level)"
    mark = cast(yaml.Mark, event.start_mark)  # events from the parser always carry their position
    return WorldFileError(f"{source}: {field} (line {mark.line + 1}): {message}")


class _Cycle(Exception):
    pass


def _check_expansion(root: yaml.Node, source: str) -> None:
    """Refuse a node graph whose aliases expand past MAX_YAML_NODES values or MAX_YAML_DEPTH levels, or
    that contains itself. Nine anchors of nine aliases each are 387,420,489 strings once built ("billion
    laughs"), from a few hundred bytes; counted here by node identity, it takes a few hundred steps."""
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) once expanded; values saturate
    tops = root.value if isinstance(root, yaml.MappingNode) else [(None, root)]
    total = 1
    for key, value in tops:
        field = str(key.value) if isinstance(key, yaml.ScalarNode) else "(top level)"
        line = value.start_mark.line + 1
        try:
            values, depth = _expand(value, measured)
        except _Cycle:
            raise WorldFileError(f"{source}: {field} (line {line}): an alias refers to a value that contains it, "
                                 "a loop that never ends; copy the value instead of the alias") from None
        total += 1 + values
        if total > MAX_YAML_NODES:
            raise WorldFileError(f"{source}: {field} (line {line}): aliases expand to more than {MAX_YAML_NODES:,} "
                                 "YAML values (MAX_YAML_NODES), an alias bomb; write the values out instead of "
                                 "nesting aliases of aliases")
        if depth + 1 > MAX_YAML_DEPTH:
            raise WorldFileError(f"{source}: {field} (line {line}): aliases nest values more than {MAX_YAML_DEPTH} "
                                 "levels deep (MAX_YAML_DEPTH); write the values out instead")


def _expand(start: yaml.Node, measured: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(values, depth) of `start` with aliases expanded, memoised by node identity. Iterative, because an
    alias chain is deeper than the file looks; raises _Cycle for a node that contains itself."""

    def children(node: yaml.Node) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        return node.value if isinstance(node, yaml.SequenceNode) else []

    open_nodes: set[int] = set()  # the nodes on the current path, to spot a loop
    todo: list[tuple[yaml.Node, bool]] = [(start, False)]
    while todo:
        node, done = todo.pop()
        if done:  # every child is measured: add them up
            kids = [measured[id(child)] for child in children(node)]
            values = min(1 + sum(v for v, _ in kids), MAX_YAML_NODES + 1)  # saturate: stays a small int
            depth = (1 + max((d for _, d in kids), default=0)) if isinstance(node, yaml.CollectionNode) else 0
            measured[id(node)] = (values, depth)
            open_nodes.discard(id(node))
            continue
        if id(node) in measured:
            continue
        if id(node) in open_nodes:
            raise _Cycle()
        open_nodes.add(id(node))
        todo.append((node, True))
        todo.extend((child, False) for child in children(node) if id(child) not in measured)
    return measured[id(start)]




def line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """The 1-based line of the deepest YAML node that `loc` reaches."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        best = node.start_mark.line + 1
    return best
