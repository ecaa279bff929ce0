"""Reading a world file: its bytes, bounded and decoded; its YAML, guarded; its kind, templated or corpus;
and every mistake in it as one `WorldFileError` line that names the file, the field and the line."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..world_cache import cached_parse
from . import World, WorldFileError
from .common import Located, SpecModel
from .corpus import CorpusWorld
from .corpus_spec import CorpusWorldSpec
from .templated import TemplatedWorld
from .templated_spec import WorldSpec
from .yaml_guard import dotted, line_of, load_yaml

MAX_WORLD_FILE_BYTES = 64 * 1024 * 1024  # checked with stat before reading anything


def load_world(path: str | Path) -> World:
    """Read and validate a world file. Anything wrong with it is one `WorldFileError` line. A large file's
    parsed world is kept on disk by its content (world_cache.py), so the next process reads it back."""
    path = Path(path)
    text = _read_world_text(path)
    return cached_parse(text, str(path), parse_world, TemplatedWorld)


def _read_world_text(path: Path) -> str:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise WorldFileError(f"{path}: world file not found; pass --world PATH or restore data/worlds/") from None
    except OSError as e:
        raise WorldFileError(f"{path}: {_os_problem(e)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise WorldFileError(f"{path}: {_os_problem(IsADirectoryError())}")
    if not stat.S_ISREG(info.st_mode):
        # A pipe blocks and a device never ends: only a regular file has a size that bounds the read.
        raise WorldFileError(f"{path}: not a regular file (a pipe, device or socket); save the world to a .yaml "
                             "file and pass that")
    if info.st_size > MAX_WORLD_FILE_BYTES:
        raise WorldFileError(f"{path}: {_too_big(info.st_size)}")
    try:
        with path.open("rb") as f:
            data = f.read(MAX_WORLD_FILE_BYTES + 1)  # bounded even if the file grew after the stat
    except OSError as e:
        raise WorldFileError(f"{path}: {_os_problem(e)}") from None
    if len(data) > MAX_WORLD_FILE_BYTES:
        raise WorldFileError(f"{path}: {_too_big(len(data))}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise WorldFileError(f"{path}: not UTF-8 text at line {line} ({e.reason} at byte {e.start}); "
                             "save the file as UTF-8") from None


def _os_problem(e: OSError) -> str:
    if isinstance(e, IsADirectoryError):
        return "is a directory, not a world file; pass the .yaml file inside it, e.g. data/worlds/tessaly_freight.yaml"
    if isinstance(e, PermissionError):
        return "cannot read the world file: permission denied; make it readable (chmod u+r) or pass a copy"
    if isinstance(e, NotADirectoryError):
        return "a folder on this path is a file; check the path"
    return f"cannot read the world file: {e.strerror or e}"


def _too_big(size: int) -> str:
    return (f"the world file is {size / 2**20:,.1f} MiB, at most {MAX_WORLD_FILE_BYTES // 2**20} MiB "
            "(MAX_WORLD_FILE_BYTES) are allowed; a world is a sample of a company, not its whole wiki")


def parse_world(text: str, source: str = "<string>") -> World:
    """Validate a world file's text; `source` names it in errors. Anything wrong is one `WorldFileError` line.
    A file with a `corpus:` key is a corpus world (pages from a revision history), else a templated one."""
    if len(text) > MAX_WORLD_FILE_BYTES:  # the same bound for text that did not come from a file
        raise WorldFileError(f"{source}: {_too_big(len(text))}")
    data, node = load_yaml(text, source)
    if not isinstance(data, dict):
        raise WorldFileError(f"{source}: a world file is a mapping with company, start, shapes, predicates, ...")
    spec_class: type[CorpusWorldSpec] | type[WorldSpec] = CorpusWorldSpec if "corpus" in data else WorldSpec
    try:
        spec = spec_class.model_validate(data)
    except ValidationError as e:
        errors = _most_telling(e.errors())
        err = errors[0]
        loc = [p for p in err["loc"] if not _is_union_tag(p)]
        located = (err.get("ctx") or {}).get("error")
        if isinstance(located, Located):
            loc += list(located.loc)
        field = dotted(loc) or "(top level)"
        line = line_of(node, loc)
        msg = err["msg"].removeprefix("Value error, ")
        at = f" (line {line})" if line else ""
        more = f" [and {len(errors) - 1} more]" if len(errors) > 1 else ""
        raise WorldFileError(f"{source}: {field}{at}: {msg}{more}") from None
    if isinstance(spec, CorpusWorldSpec):
        return CorpusWorld(spec, source)
    world = TemplatedWorld(spec, source)
    try:
        world.check_answers_stated()  # needs the pages rendered: a check of the world, not of its file's fields
    except Located as e:
        line = line_of(node, list(e.loc))
        raise WorldFileError(f"{source}: {dotted(list(e.loc))}{f' (line {line})' if line else ''}: {e}") from None
    return world


def _most_telling(errors: list) -> list:
    """The errors worth reading first: where a field takes one of several shapes (`questions:` a file name or a
    list), that the input is not the shape it was never meant as ("Input should be a valid string" for a list)
    says nothing; the errors inside the shape it is ("questions.0.hops: Field required") say what to fix."""
    telling = [e for e in errors if not (e["type"].endswith("_type") and e["loc"] and _is_union_tag(e["loc"][-1]))]
    return telling or errors


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the union member's name to the location ("str", "FactPart"); a person never wrote it.
    return isinstance(part, str) and (part in {"str", "int", "float"} or "[" in part
                                      or part in {cls.__name__ for cls in _spec_classes()})


def _spec_classes() -> list[type]:
    found: list[type] = []
    todo: list[type[SpecModel]] = [SpecModel]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found
