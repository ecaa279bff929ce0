"""The study's settings: what they say a run leaves unread."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.core.test_bad_worlds import snapshot_world


@pytest.mark.parametrize(("extractor", "reader", "named"), [
    ("regex", "deterministic", ["--extractor model", "--reader model"]),
    ("model", "deterministic", ["--reader model"]),
    ("regex", "model", ["--extractor model"]),
    ("model", "model", []),
])
def test_the_prose_note_names_only_the_parts_that_read_no_prose(extractor, reader, named):
    study = StudySettings(extractor=extractor, reader=reader)
    note = study.prose_unread(described=1)
    assert [flag for flag in ("--extractor model", "--reader model") if note and flag in note] == named
    assert note is None or note.startswith("1 of this world's relations")
    assert study.prose_unread(described=0) is None  # a templated world: every relation has its patterns


def test_governed_reading_pages_where_its_graph_is_silent_is_another_answers_version():
    """Answers computed with Governed abstaining are stale once it reads pages instead (and back): the setting is
    part of the answers' code version."""
    from driftlab_dagster.core.session import reader_id
    from driftlab_dagster.project import DEFAULT_WORLD

    world = load_world(DEFAULT_WORLD)
    default, reads = reader_id(StudySettings(), world), reader_id(StudySettings(governed_when_silent="pages"), world)
    assert default.startswith("deterministic+bm25")
    assert reads != default
    with pytest.raises(ValueError, match="governed_when_silent"):
        StudySettings(governed_when_silent="guess")


def test_governed_reads_a_wikis_pages_where_its_graph_is_silent_by_default(tmp_path):
    """"auto", the default, is "pages" for a world read from prose (its graph lacks what the model could not
    extract) and "abstain" for a templated one (its sentences are parsed exactly); an explicit choice wins, and
    "auto" and the choice it makes are one answers version (the same rows)."""
    from driftlab_dagster.core.session import reader_id, when_silent
    from driftlab_dagster.project import DEFAULT_WORLD

    templated = load_world(DEFAULT_WORLD)
    wiki = load_world(snapshot_world(tmp_path, {"2022-01-01": {"wiki/billing.md": "The Falcon team owns billing."}}))
    assert StudySettings().governed_when_silent == "auto"
    assert (when_silent(StudySettings(), templated), when_silent(StudySettings(), wiki)) == ("abstain", "pages")
    assert when_silent(StudySettings(governed_when_silent="abstain"), wiki) == "abstain"
    assert when_silent(StudySettings(governed_when_silent="pages"), templated) == "pages"
    for world, chosen in ((templated, "abstain"), (wiki, "pages")):
        assert reader_id(StudySettings(), world) == reader_id(StudySettings(governed_when_silent=chosen), world)


def test_a_change_of_the_designs_answer_rules_is_another_answers_version(monkeypatch):
    """A rule the designs answer by (Governed's weighing, say) changed: stored answers are stale, whatever reader."""
    from driftlab_dagster.core import session
    from driftlab_dagster.project import DEFAULT_WORLD

    world = load_world(DEFAULT_WORLD)
    before = {reader: session.reader_id(StudySettings(reader=reader), world) for reader in ("deterministic", "model")}
    monkeypatch.setattr(session, "ANSWER_RULES_VERSION", "another rule")
    assert all(session.reader_id(StudySettings(reader=r), world) != version for r, version in before.items())
