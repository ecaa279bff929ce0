"""The world file: validation with one-line errors, and page texts that depend on the world's state."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from driftlab_dagster.core.world import WorldFileError, loader, yaml_guard
from driftlab_dagster.core.world.loader import load_world, parse_world
from driftlab_dagster.project import DEFAULT_WORLD


def _page(world, scenario: str, step: int, page_id: str) -> str:
    return next(p.body for p in world.pages_at(scenario, step) if p.id == page_id)


def test_the_bundled_world_has_the_posts_shape(world):
    assert len(world.spec.pages) == 40
    assert len(world.spec.events) == 4
    assert len(world.spec.questions) == 20
    assert world.scenario_names == ["Fresh", "StalePages", "StaleGraph", "PartialPages"]
    assert world.day_keys == ["2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29"]
    assert sum(len(q.hops) == 2 for q in world.spec.questions) == 2


def test_the_tracking_page_gains_the_formerly_sentence_after_the_rename(world):
    assert _page(world, "Fresh", 0, "d06").startswith("Tessaly Track is our real-time shipment tracking app.")
    assert _page(world, "Fresh", 1, "d06").startswith(
        "Tessaly Beacon was formerly called Tessaly Track. Tessaly Beacon is our real-time shipment tracking app.")


def test_the_payments_owner_line_moves_from_the_atlas_page_to_the_orion_page(world):
    assert _page(world, "Fresh", 3, "d09") == ("The Atlas team is led by Derya Kaya. Routing engine is owned by the "
                                               "Atlas team. Payments service is owned by the Atlas team. Atlas sits "
                                               "on the third floor in Izmir.")
    assert "Payments service" not in _page(world, "Fresh", 4, "d09")
    assert _page(world, "Fresh", 4, "d10").endswith("invoicing. Payments service is owned by the Orion team.")
    assert _page(world, "Fresh", 4, "d20") == ("If card capture errors spike, page the owning team. Payments service "
                                               "is owned by the Orion team. The Orion team is led by Emre Aslan. "
                                               "Check the provider status page first.")


def test_the_meeting_notes_carry_the_unapproved_draft_price_only_from_day_28(world):
    assert _page(world, "Fresh", 3, "d27").endswith("No decisions on pricing.")
    assert _page(world, "Fresh", 4, "d27").endswith(
        "nothing approved yet. The Starter plan costs €24 per user per month.")
    # The meeting notes are canonical for the owner change, so even PartialPages shows the trap.
    assert "€24" in _page(world, "PartialPages", 4, "d27")
    assert "€24" not in _page(world, "StalePages", 4, "d27")


def test_partial_pages_update_only_the_canonical_page(world):
    assert "€59" in _page(world, "PartialPages", 3, "d02")
    assert "€49" in _page(world, "PartialPages", 3, "d19")  # the support macro lags behind
    assert "€59" in _page(world, "Fresh", 3, "d19")


def test_questions_use_the_true_state_not_the_pages(world):
    q = {q.id: q for q in world.questions_at(4)}
    assert q["R1"].text == "What is Tessaly Beacon?"
    assert q["O2"].expected == "Emre Aslan"
    assert {q.id: q for q in world.questions_at(3)}["O2"].expected == "Derya Kaya"


def _broken(text_from: str, text_to: str) -> str:
    source = DEFAULT_WORLD.read_text(encoding="utf-8")
    assert text_from in source
    return source.replace(text_from, text_to, 1)


@pytest.mark.parametrize("edit, expected_fragments", [
    (("hops: [price], expected: '19'", "hops: [cost], expected: '19'"),
     ["questions[0]", "unknown predicate 'cost'"]),
    (("  - {id: 2, day: 14,", "  - {id: 2, day: fourteen,"), ["events[1].day", "line 10", "integer"]),
    (("    subject: word\n    object: integer\n    meaning: subject is a plan name such",
      "    subject: word\n    meaning: subject is a plan name such"), ["predicates.price.object", "Field required"]),
    (("fact: [price, Pro, '{pro_price}']", "fact: [price, Pro, '{pro_prize}']"), ["pro_prize", "not a state variable"]),
    (("company: Tessaly Freight", "company: [Tessaly Freight"), ["not valid YAML", "line"]),
])
def test_a_malformed_world_file_fails_with_one_line_naming_the_field(tmp_path: Path, edit, expected_fragments):
    path = tmp_path / "world.yaml"
    path.write_text(_broken(*edit), encoding="utf-8")
    with pytest.raises(WorldFileError) as info:
        load_world(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    for fragment in expected_fragments:
        if fragment.startswith("line "):
            assert "line " in message
        else:
            assert fragment in message, message


def test_an_invalid_day_error_points_at_the_line_of_that_event(tmp_path: Path):
    text = _broken("  - {id: 2, day: 14,", "  - {id: 2, day: fourteen,")
    line = next(i for i, text_line in enumerate(text.splitlines(), 1) if "day: fourteen" in text_line)
    path = tmp_path / "world.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WorldFileError, match=f"events\\[1\\].day \\(line {line}\\)"):
        load_world(path)


def test_a_missing_world_file_says_so(tmp_path: Path):
    with pytest.raises(WorldFileError, match="world file not found"):
        load_world(tmp_path / "nope.yaml")


TINY_WORLD = ("""
company: Tiny Co
start: 2027-01-04T09:00:00Z
shapes: {word: '[A-Z]\\w+', integer: '\\d+'}
predicates:
  price:
    sentence: 'The {subject} plan costs ${object} a month.'
    subject: word
    object: integer
    meaning: plan price in USD
    question: What does the {subject} plan cost?
    query: plan costs month
state: {basic_price: 5}
events:
"""
              "  - {id: 1, day: 3, kind: price, set: {basic_price: 7},"
              " record: {source: 'record:billing', fact: [price, Basic, '{basic_price}']}}\n"
              """scenarios:
  Fresh: {pages: all, graph: patch_changed_pages}
  StalePages: {pages: none, graph: patch_from_record}
  StaleGraph: {pages: all, graph: none}
pages:
  - {id: p1, title: Prices, canonical_for: [price], body: [{fact: [price, Basic, '{basic_price}']}]}
  - {id: p2, title: Office, body: [We sit by the sea.]}
questions:
  - {id: Q1, event: 1, text: 'How much is the Basic plan?', entity: Basic, hops: [price], expected: '{basic_price}'}
""")


def test_a_user_can_write_their_own_company_in_the_same_format():
    from driftlab_dagster.core.study import run_study

    world = parse_world(TINY_WORLD, "tiny.yaml")
    assert world.day_keys == ["2027-01-04", "2027-01-07"]
    study = run_study(world)
    by = {(r["scenario"], r["design"], r["step"]): r for r in study.results}
    assert by[("Fresh", "Rag", 1)]["answer"] == "7"
    assert by[("StalePages", "Rag", 1)]["answer"] == "5"  # the page never learned
    assert by[("StalePages", "Graph", 1)]["answer"] == "7"  # the billing system did
    assert by[("StaleGraph", "Graph", 1)]["answer"] == "5"


def test_the_stored_form_of_a_world_keeps_its_declared_order(world):
    from driftlab_dagster.core.world.templated import TemplatedWorld

    again = TemplatedWorld.from_json(world.canonical_json)
    assert again.scenario_names == world.scenario_names
    assert again.ontology.names == world.ontology.names
    assert again.sha256 == world.sha256


# ---------------------------------------------------------------------------------------------------------
# Files that look valid but would hang or crash the run: each fails in load_world, in one line that names the
# field. The bad inputs are built here; nothing asserts a time, a hang simply fails the run.

def _rejected(tmp_path: Path, text: str) -> str:
    """Load `text` as a world file; return the WorldFileError's message after checking it is one line."""
    path = tmp_path / "world.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WorldFileError) as info:
        load_world(path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(f"{path}: "), message
    return message


def _shape(name: str, pattern: str) -> str:
    """The bundled world with one shape replaced."""
    source = DEFAULT_WORLD.read_text(encoding="utf-8")
    line = next(line for line in source.splitlines() if line.startswith(f"  {name}: '"))
    return source.replace(line, f"  {name}: '{pattern}'", 1)


@pytest.mark.parametrize("name, pattern, expected", [
    ("name", "([A-Za-z]+ ?)+", "nests a repetition inside a repetition"),  # the tester's hang
    ("name", "([A-Z]\\w*)+", "nests a repetition inside a repetition"),
    ("word", "[A-Z](a|ab)+", "repeats an alternation"),
    ("word", "[A-Z](?:Pro|Basic)+", "repeats an alternation"),
    ("word", "[A-Z](a?a)+", "repeats a part of variable length"),  # 'aa' is one repetition or two
    ("word", "([A-Z])\\w+\\1", "backreference"),
    ("word", "(?=[A-Z])\\w+", "lookahead or lookbehind"),
    ("word", "\\w+(?<!s)", "lookahead or lookbehind"),
    ("word", "[A-Z]*", "matches the empty string"),
    ("word", "(a|ab)*", "matches the empty string"),
    ("word", "(?P<plan>[A-Z]\\w+)", "names a group"),
    ("word", "[A-Z" + "x" * 1000 + "]", "at most 1,000"),
])
def test_a_shape_that_can_backtrack_catastrophically_is_refused(tmp_path, name, pattern, expected):
    message = _rejected(tmp_path, _shape(name, pattern))
    assert f"shapes.{name} (line " in message and expected in message, message
    assert repr(pattern)[:30] in message or "at most" in message, message


def test_the_nested_repetition_message_says_how_to_fix_it(tmp_path):
    message = _rejected(tmp_path, _shape("name", "([A-Za-z]+ ?)+"))
    assert message.endswith("'([A-Za-z]+ ?)+' nests a repetition inside a repetition, which can take exponential time "
                            "on a long sentence; write it as a single repetition of a character class such as "
                            "'[A-Za-z ]+'"), message


def test_a_shape_that_breaks_its_sentences_pattern_is_refused_at_load(tmp_path):
    # (?i) compiles on its own but not in the middle of the price sentence's pattern.
    message = _rejected(tmp_path, _shape("word", "(?i)[A-Z]\\w+"))
    assert "predicates.price.sentence" in message and "(?i:" in message, message


@pytest.mark.parametrize("pattern", [
    "[A-Z][\\w ]+?", "[A-Z]\\w+ [A-Z]\\w+", "[\\d.]+", "[^.]+", "Tessaly \\w+",  # Tessaly's own
    "[A-Z][\\w -]+?", "[A-Z]\\w+ [A-Z][\\w-]+",  # Quillfeather's
    "\\d+(?:,\\d{3})*",  # a repetition of a fixed-width part: \d{3} is not a nested repetition
    "(?:\\.\\d+)?\\d", "(?i:[a-z]+)",
])
def test_simple_shapes_stay_valid(pattern):
    # A shape of its own, next to the world's: in place of `phrase` it would no longer fit the world's facts
    # (test_bad_worlds.py), which is another refusal than the one this test is about.
    phrase = next(line for line in DEFAULT_WORLD.read_text(encoding="utf-8").splitlines()
                  if line.startswith("  phrase: '"))
    source = DEFAULT_WORLD.read_text(encoding="utf-8").replace(phrase, f"{phrase}\n  spare: '{pattern}'", 1)
    assert parse_world(source, "ok.yaml").spec.shapes["spare"] == pattern


def _with_top_level(yaml_text: str) -> str:
    """The bundled world with extra YAML put before `company:` (an unknown key, but YAML is read first)."""
    return _broken("company: Tessaly Freight", yaml_text + "\ncompany: Tessaly Freight")


def _alias_bomb(levels: int = 9, fan_out: int = 9) -> str:
    lines = ["lol0: &lol0 [lol]"]
    for level in range(1, levels + 1):
        lines.append(f"lol{level}: &lol{level} [{', '.join([f'*lol{level - 1}'] * fan_out)}]")
    return "\n".join(lines)


@pytest.mark.parametrize("text, expected", [
    pytest.param(_with_top_level(_alias_bomb()), [r"lol\d \(line \d+\): aliases expand to more than 1,000,000"],
                 id="billion-laughs"),
    pytest.param(_with_top_level("loop: &loop [a, *loop]"), [r"loop \(line \d+\): an alias refers to a value that "
                                                             "contains it"], id="alias-cycle"),
    pytest.param(_with_top_level("loop: &loop {a: {b: *loop}}"), [r"loop \(line \d+\): an alias"], id="mapping-cycle"),
    pytest.param(_broken("company: Tessaly Freight", "company: " + "[" * 10_000),
                 [r"company\[0\]\[0\]", r"\(line 7\)", "more than 64 levels deep"], id="10000-brackets"),
    pytest.param(_broken("company: Tessaly Freight", "company: " + "{a: " * 10_000),
                 [r"company\.a\.a", "more than 64 levels deep"], id="10000-braces"),
    pytest.param(_with_top_level("deep:\n" + "".join("  " * i + f"- k{i}:\n" for i in range(1, 100))),
                 [r"deep\[0\]\.k1", "more than 64 levels deep"], id="deep-block-nesting"),
    pytest.param(_with_top_level("\n".join(["d0: &d0 [x]"] + [f"d{i}: &d{i} [*d{i - 1}]" for i in range(1, 80)])),
                 [r"d6\d \(line \d+\): aliases nest values more than 64 levels deep"], id="deep-through-aliases"),
])
def test_yaml_that_would_exhaust_memory_or_the_stack_is_refused(tmp_path, text, expected):
    message = _rejected(tmp_path, text)
    for pattern in expected:
        assert re.search(pattern, message), message


def test_a_file_with_more_values_than_the_cap_is_refused_before_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(yaml_guard, "MAX_YAML_NODES", 5_000)  # the real cap is a million: same code path
    message = _rejected(tmp_path, _with_top_level("many: [" + "0, " * 5_000 + "]"))
    assert re.search(r"many\[\d+\] \(line 7\): the file holds more than 5,000 YAML values", message), message


def test_small_aliases_still_work():
    text = _broken("  Fresh: {pages: all, graph: patch_changed_pages}",
                   "  Fresh: &fresh {pages: all, graph: patch_changed_pages}\n  Fresh2: *fresh")
    world = parse_world(text, "ok.yaml")
    assert world.scenario_names[:2] == ["Fresh", "Fresh2"]
    assert world.spec.scenarios["Fresh2"] == world.spec.scenarios["Fresh"]


@pytest.mark.parametrize("edit, expected", [
    (("day: 7,", "day: 99999999,"), ["events[0].day (line ", "day 99999999 is out of range", "from 1 to 36500"]),
    (("day: 7,", "day: 0,"), ["events[0].day (line ", "day 0 is out of range"]),
    (("day: 7,", "day: " + "9" * 5000 + ","), ["events[0].day (line ", "thousands of digits"]),
    (("start: 2026-09-01T09:00:00Z", "start: 1850-09-01T09:00:00Z"), ["start (line 8)", "between 1900 and 2999"]),
    (("start: 2026-09-01T09:00:00Z", "start: 3000-01-01T00:00:00Z"), ["start (line 8)", "between 1900 and 2999"]),
    (("start: 2026-09-01T09:00:00Z", "start: 2026-13-45"), ["start (line 8)", "month must be in 1..12"]),
])
def test_days_and_dates_that_overflow_the_calendar_are_refused(tmp_path, edit, expected):
    message = _rejected(tmp_path, _broken(*edit))
    for fragment in expected:
        assert fragment in message, message


@pytest.mark.parametrize("edit, expected", [
    (("  Fresh: {", "  'Fresh|1': {"), ["scenarios.Fresh|1 (line ", "cannot be a partition key"]),
    (("  Fresh: {", "  'Fresh,1': {"), ["scenarios.Fresh,1 (line ", "cannot be a partition key"]),
    (("  Fresh: {", "  1Fresh: {"), ["scenarios.1Fresh (line ", "start with a letter"]),
    (("  Fresh: {", "  " + "F" * 49 + ": {"), ["scenarios.FFFF", "at most 48 characters"]),
    (("- {id: C1,", "- {id: 'C 1',"), ["questions[0].id (line ", "question id 'C 1' is not a key"]),
    (("- {id: C1,", "- {id: '-C1',"), ["questions[0].id (line "]),
    (("  - id: d01\n", "  - id: 'd|01'\n"), ["pages[0].id (line ", "contains '|'"]),
    (("  - id: d01\n", "  - id: ''\n"), ["pages[0].id (line ", "is empty"]),
    (("  - id: d01\n", '  - id: "d\\x0101"\n'), ["pages[0].id (line ", "contains '\\x01'"]),
    (("  - id: d01\n", f"  - id: {'d' * 201}\n"), ["pages[0].id (line ", "201 characters"]),
    (("company: Tessaly Freight", "id: Tessaly\ncompany: Tessaly Freight"), ["id (line 7)", "is not a world id"]),
])
def test_names_that_cannot_be_keys_are_refused(tmp_path, edit, expected):
    message = _rejected(tmp_path, _broken(*edit))
    for fragment in expected:
        assert fragment in message, message


@pytest.mark.parametrize("edit, expected", [
    (("pro_price: 49", "pro_price: .inf"), ["state.pro_price (line ", "inf is not a finite number"]),
    (("pro_price: 49", "pro_price: .nan"), ["state.pro_price (line ", "nan is not a finite number"]),
    (("pro_price: 49", "pro_price: 1.0e+999"), ["state.pro_price (line ", "inf is not a finite number"]),
    (("set: {pro_price: 59}", "set: {pro_price: -.inf}"), ["events[2].set.pro_price (line ", "not a finite number"]),
    (("payments_lead: Derya Kaya", "payments_lead: " + "x" * 1001), ["state.payments_lead (line ", "at most 1,000"]),
    (("fact: [does, Tessaly Dock, warehouse slotting tool]", "fact: [does, Tessaly Dock, " + "w" * 1001 + "]"),
     ["pages[0].body[2].fact[2] (line ", "a fact's text is 1,001 characters long"]),
    (("fact: [does, Tessaly Dock, warehouse slotting tool]", "fact: [does, Tessaly Dock, " + "w" * 990 + "]"),
     ["pages[0].body[2].fact (line ", "MAX_SENTENCE_CHARS"]),  # fits the text cap, not the sentence cap
    (("      - About 140 people work", "      - " + "lorem ipsum " * 22_000 + "\n      - About 140 people work"),
     ["pages[0].body (line ", "at most 262,144 (MAX_PAGE_CHARS)"]),
    (("  Fresh: {pages: all, graph: patch_changed_pages}",
      "".join(f"  S{i}: {{pages: all, graph: none}}\n" for i in range(2_000)) + "  Fresh: {pages: all, graph: none}"),
     ["scenarios (line ", "10,020 partitions, at most 10,000"]),
])
def test_sizes_and_numbers_that_would_exhaust_the_run_are_refused(tmp_path, edit, expected):
    message = _rejected(tmp_path, _broken(*edit))
    for fragment in expected:
        assert fragment in message, message


def test_short_facts_that_render_long_count_at_their_rendered_size(tmp_path):
    # 300 facts of a few characters each, filled with a 900-character state value: 9 KB of template, 270 KB
    # on every page render. The page cap counts what is rendered.
    text = _broken("  payments_lead: Derya Kaya", "  payments_lead: Derya Kaya\n  blurb: " + "x" * 900)
    text = text.replace("      - Tessaly Freight builds software for regional freight forwarders.",
                        "      - Tessaly Freight builds software for regional freight forwarders.\n"
                        + "      - fact: [does, Tessaly Dock, '{blurb}']\n" * 300, 1)
    message = _rejected(tmp_path, text)
    assert "pages[0].body (line " in message and "up to 27" in message and "MAX_PAGE_CHARS" in message, message


@pytest.mark.parametrize("section, count, expected", [
    ("events", 1_001, "1,001 events, at most 1,000"),
    ("pages", 100_001, "100,001 pages, at most 100,000"),
    ("questions", 10_001, "10,001 questions, at most 10,000"),
])
def test_too_many_events_pages_or_questions_are_refused_before_each_is_validated(tmp_path, section, count, expected):
    source = DEFAULT_WORLD.read_text(encoding="utf-8")
    # Replace the section with a flow list of `count` placeholders: the count is checked before the items.
    head, rest = source.split(f"\n{section}:\n", 1)
    tail = rest[rest.index("\n\n"):] if "\n\n" in rest else ""
    message = _rejected(tmp_path, f"{head}\n{section}: [{', '.join(['0'] * count)}]\n{tail}")
    assert f"{section} (line " in message and expected in message, message


def test_a_directory_is_not_a_world_file(tmp_path):
    with pytest.raises(WorldFileError, match=r"^[^\n]*: is a directory, not a world file; pass the \.yaml file"):
        load_world(tmp_path)


def test_a_world_file_in_place_of_a_folder_says_so(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WorldFileError, match=r"^[^\n]*: a folder on this path is a file"):
        load_world(tmp_path / "file" / "world.yaml")


def test_an_unreadable_world_file_says_so(tmp_path, monkeypatch):
    path = tmp_path / "world.yaml"
    path.write_text(DEFAULT_WORLD.read_text(encoding="utf-8"), encoding="utf-8")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: fail the open the way it fails for everyone else
        def refuse(self, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(self))
        monkeypatch.setattr(Path, "open", refuse)
    try:
        with pytest.raises(WorldFileError, match=r"^[^\n]*: cannot read the world file: permission denied"):
            load_world(path)
    finally:
        path.chmod(0o644)


def test_a_file_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "world.yaml"
    path.write_bytes(DEFAULT_WORLD.read_bytes().replace(b"company: Tessaly Freight", b"company: Tessaly \xff Freight"))
    with pytest.raises(WorldFileError, match=r"^[^\n]*: not UTF-8 text at line 7 \(invalid start byte"):
        load_world(path)


def test_a_pipe_is_not_read(tmp_path):
    # Reading a FIFO with no writer would block forever: refused from its stat alone.
    path = tmp_path / "world.yaml"
    os.mkfifo(path)
    with pytest.raises(WorldFileError, match=r"^[^\n]*: not a regular file"):
        load_world(path)


def test_a_world_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "world.yaml"
    with path.open("wb") as f:  # sparse: the size is real to stat, the disk stays empty
        f.truncate(loader.MAX_WORLD_FILE_BYTES + 1)
    with pytest.raises(WorldFileError, match=r"^[^\n]*: the world file is 64\.0 MiB, at most 64 MiB"):
        load_world(path)


def test_parsed_text_over_the_size_cap_is_refused(monkeypatch):
    monkeypatch.setattr(loader, "MAX_WORLD_FILE_BYTES", 1_000)
    with pytest.raises(WorldFileError, match=r"^big\.yaml: the world file is"):
        parse_world(DEFAULT_WORLD.read_text(encoding="utf-8"), "big.yaml")


@pytest.mark.parametrize("text, expected", [
    ('company: "Tessaly \\ud800"', r"company \(line 7\): the text contains half of a UTF-16 surrogate pair"),
    ("company: Tessaly \x07", r"not valid YAML at line 7, column 18: unacceptable character #x0007"),
    ("company: [Tessaly Freight", r"not valid YAML at line 8, column 6: expected ',' or ']', but got ':'"),
])
def test_yaml_errors_read_the_same_with_or_without_libyaml(tmp_path, monkeypatch, text, expected):
    source = _broken("company: Tessaly Freight", text)
    with_libyaml = _rejected(tmp_path, source)
    monkeypatch.setattr(yaml_guard, "_FastLoader", None)
    assert _rejected(tmp_path, source) == with_libyaml
    assert re.search(expected, with_libyaml), with_libyaml


# ----- identity -----

def test_the_bundled_world_has_an_id_and_a_version(world):
    assert world.id == "tessaly_freight"
    assert world.version == world.sha256[:12] and re.fullmatch(r"[0-9a-f]{12}", world.version)
    # No `id:` in the file: the stored form is what it was before the field existed, so the hash is too.
    assert "id" not in json.loads(world.canonical_json)


@pytest.mark.parametrize("company, expected", [
    ("Tessaly Freight", "tessaly_freight"),
    ("  ACME, Inc. -- Europe  ", "acme_inc_europe"),
    ("3M Health", "w_3m_health"),
    ("!!!", "w_"),
    ("Very Long Company Name " * 4, "very_long_company_name_very_long_company_name_ve"),
])
def test_without_an_id_the_world_is_named_after_its_company(company, expected):
    world = parse_world(TINY_WORLD.replace("company: Tiny Co", f"company: '{company}'"), "tiny.yaml")
    assert world.id == expected
    assert re.fullmatch(r"[a-z][a-z0-9_]{0,47}", world.id)


def test_an_explicit_id_wins_and_survives_the_stored_form():
    from driftlab_dagster.core.world.templated import TemplatedWorld

    world = parse_world("id: tiny_v2\n" + TINY_WORLD, "tiny.yaml")
    assert world.id == "tiny_v2"
    again = TemplatedWorld.from_json(world.canonical_json)
    assert again.id == "tiny_v2" and again.sha256 == world.sha256
    assert world.version != parse_world(TINY_WORLD, "tiny.yaml").version


@pytest.mark.parametrize("name", sorted(p.name for p in (DEFAULT_WORLD.parent).glob("*.yaml")))
def test_pages_rendered_once_per_distinct_state_equal_a_fresh_rendering(name):
    # pages_at reuses a body while nothing the body reads has changed; every scenario and day must still
    # show exactly what rendering that page from its own state gives, in the same (fresh) world and across
    # repeated and out-of-order asks.
    reused, fresh = load_world(DEFAULT_WORLD.parent / name), load_world(DEFAULT_WORLD.parent / name)
    steps = range(len(reused.checkpoints))
    asks = [(s, step) for s in reused.scenario_names for step in steps]
    for scenario, step in asks + asks[::-1]:
        pages = reused.pages_at(scenario, step)
        expected = [fresh.render_body(p.body, fresh.page_state(scenario, step, p)) for p in fresh.spec.pages]
        assert [p.body for p in pages] == expected, (scenario, step)
    assert any(reused.pages_at(s, 0) != reused.pages_at(s, steps[-1]) for s in reused.scenario_names)
