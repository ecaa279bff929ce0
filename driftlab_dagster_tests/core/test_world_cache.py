"""A large world is parsed once: the next load reads the parsed world back, unless anything it came from changed."""

from __future__ import annotations

import pytest

from driftlab_dagster.core import world_cache
from driftlab_dagster.core.world import World, loader
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DEFAULT_WORLD


@pytest.fixture
def parses(monkeypatch, tmp_path):
    """Cache every world (not only large ones) in a fresh folder, and count the real parses."""
    monkeypatch.setenv("DRIFTLAB_WORLD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(world_cache, "CACHE_FROM_BYTES", 0)
    calls: list[str] = []
    real = loader.parse_world

    def counting(text: str, source: str = "<string>") -> World:
        calls.append(source)
        return real(text, source)

    monkeypatch.setattr(loader, "parse_world", counting)
    return calls


def _copy(tmp_path, name="world.yaml", edit=lambda t: t):
    path = tmp_path / name
    path.write_text(edit(DEFAULT_WORLD.read_text(encoding="utf-8")), encoding="utf-8")
    return path


def test_the_second_load_reads_the_parsed_world_back(parses, tmp_path):
    path = _copy(tmp_path)
    first, second = load_world(path), load_world(path)
    assert parses == [str(path)]
    assert second is not first and second.spec == first.spec and second.version == first.version
    assert second.source == str(path) and [p.body for p in second.pages_at("Fresh", 2)] == [
        p.body for p in first.pages_at("Fresh", 2)]
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 1


def test_an_edited_file_or_another_path_is_parsed_again(parses, tmp_path):
    path = _copy(tmp_path)
    before = load_world(path)
    _copy(tmp_path, edit=lambda t: t.replace("company: Tessaly Freight", "company: Tessaly Haulage"))
    after = load_world(path)
    moved = load_world(_copy(tmp_path, "elsewhere.yaml",
                             edit=lambda t: t.replace("company: Tessaly Freight", "company: Tessaly Haulage")))
    assert len(parses) == 3
    assert after.version != before.version and moved.version == after.version
    assert moved.source.endswith("elsewhere.yaml")


def test_a_damaged_entry_is_parsed_again_and_replaced(parses, tmp_path):
    path = _copy(tmp_path)
    expected = load_world(path).spec
    [entry] = (tmp_path / "cache").glob("*.pickle")
    entry.write_bytes(entry.read_bytes()[:100])
    assert load_world(path).spec == expected and len(parses) == 2
    assert load_world(path).spec == expected and len(parses) == 2  # the replaced entry serves the third


def test_a_cache_folder_that_cannot_be_written_is_no_error(parses, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("DRIFTLAB_WORLD_CACHE", str(blocker / "cache"))
    path = _copy(tmp_path)
    assert load_world(path).spec == load_world(path).spec and len(parses) == 2
    assert list(tmp_path.glob("*.tmp")) == []


def test_off_keeps_nothing(parses, tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFTLAB_WORLD_CACHE", "off")
    path = _copy(tmp_path)
    load_world(path), load_world(path)
    assert len(parses) == 2 and not (tmp_path / "cache").exists()


def test_small_worlds_are_not_kept_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFTLAB_WORLD_CACHE", str(tmp_path / "cache"))
    assert DEFAULT_WORLD.stat().st_size < world_cache.CACHE_FROM_BYTES
    load_world(DEFAULT_WORLD)
    assert not (tmp_path / "cache").exists()


def test_the_cache_keeps_only_the_newest_entries(parses, tmp_path, monkeypatch):
    monkeypatch.setattr(world_cache, "KEEP_ENTRIES", 2)
    for n in range(4):
        load_world(_copy(tmp_path, f"w{n}.yaml"))
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 2


def test_a_world_read_back_gives_the_same_study_byte_for_byte(parses, tmp_path):
    from driftlab_dagster.core.reports import results_csv
    from driftlab_dagster.core.study import run_study

    path = _copy(tmp_path)
    parsed = run_study(load_world(path))
    read_back = run_study(load_world(path))
    assert len(parses) == 1
    assert results_csv(read_back.results) == results_csv(parsed.results)
    assert read_back.costs == parsed.costs
