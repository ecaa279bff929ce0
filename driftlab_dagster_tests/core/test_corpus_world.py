"""A world read from a revision history: pages, renames and deletions from git (or dated folders), questions
with their answer at each checkpoint, permissions and authority by path, and one line for every mistake
in the files a person writes."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from driftlab_dagster.core.units import markdown_units
from driftlab_dagster.core.world import WorldFileError
from driftlab_dagster.core.world.loader import load_world

WORLD = """
company: Pinecone Pantry
corpus:
  git: repo
  paths: ["wiki/**/*.md"]
  checkpoints: [2022-02-01, 2022-07-01, 2023-01-01]
questions: questions.yaml
predicates:
  owned_by: {description: which team owns a service, object: name, cues: [owns, owned]}
  refund_days: {description: the refund window in days, fixed_subject: Refund policy, object: number,
                cues: [refund]}
authority: {"wiki/policies/**": 1, "wiki/notes/**": 3}
audience: {"wiki/finance/**": finance}
"""

QUESTIONS = """
- id: Q1
  text: Which team owns billing?
  entity: Billing
  hops: [owned_by]
  answers: {2022-01-01: Falcon, 2022-06-15: Heron}
  accepted: {Heron: [Heron team]}
- id: Q2
  text: How long is the refund window?
  entity: Refund policy
  hops: [refund_days]
  answers: {2022-01-01: none, 2022-12-01: 21}
- id: Q3
  text: Which team owns travel?
  entity: Travel
  hops: [owned_by]
  caller: [finance]
  answers: {2022-01-01: Kestrel}
- id: Q4
  text: Which team owns travel?
  entity: Travel
  hops: [owned_by]
  caller: [public]
  answers: {2022-01-01: none}
"""


def _commit(repo: Path, when: str, files: dict[str, str | None], message: str, moves: dict[str, str] | None = None):
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for old, new in (moves or {}).items():
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(repo), "mv", old, new], check=True, env=env)
    for path, text in files.items():
        target = repo / path
        if text is None:
            subprocess.run(["git", "-C", str(repo), "rm", "-q", path], check=True, env=env)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).strip() + "\n")
        subprocess.run(["git", "-C", str(repo), "add", path], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return make_wiki(tmp_path)


def make_wiki(tmp_path: Path) -> Path:
    """A three-page wiki with an owner change, a moved page, a deleted page and a restricted page."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "t@example.org"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "T"], check=True)
    _commit(repo, "2022-01-10T10:00:00Z", {
        "wiki/teams/billing.md": "# Billing\nThe Falcon team owns billing.",
        "wiki/notes/sync.md": "# Weekly sync\nWe discussed the roadmap.",
        "wiki/finance/travel.md": "# Travel\nThe Kestrel team owns travel.",
    }, "start")
    _commit(repo, "2022-06-15T10:00:00Z", {"wiki/teams/billing.md": "# Billing\nThe Heron team owns billing now."},
            "billing moves to Heron")
    _commit(repo, "2022-09-01T10:00:00Z", {}, "move the billing page",
            moves={"wiki/teams/billing.md": "wiki/ops/billing.md"})
    _commit(repo, "2022-12-01T10:00:00Z", {"wiki/policies/refunds.md": "# Refunds\n\n- Window: 21 days\n- Method: card",
                                          "wiki/notes/sync.md": None}, "refund policy; notes deleted")
    (tmp_path / "world.yaml").write_text(WORLD)
    (tmp_path / "questions.yaml").write_text(QUESTIONS)
    return tmp_path


def test_checkpoints_are_the_trees_at_the_start_of_each_date(wiki):
    world = load_world(wiki / "world.yaml")
    assert world.day_keys == ["2022-02-01", "2022-07-01", "2023-01-01"]
    assert world.id == "pinecone_pantry" and world.page_count == 5
    pages = {p.id: p for p in world.pages_at("Fresh", 1)}
    assert "Heron team owns billing" in pages["wiki/teams/billing.md"].body
    assert pages["wiki/teams/billing.md"].updated_at == dt.datetime(2022, 6, 15, 10)
    assert pages["wiki/teams/billing.md"].title == "Billing"
    last = {p.id for p in world.pages_at("Fresh", 2)}
    assert "wiki/ops/billing.md" in last and "wiki/teams/billing.md" not in last  # moved
    assert "wiki/notes/sync.md" not in last and "wiki/policies/refunds.md" in last  # deleted, added
    assert world.renames_at("Fresh", 2) == {"wiki/teams/billing.md": "wiki/ops/billing.md"}


def test_questions_take_the_answer_of_each_checkpoint_and_know_what_drifted(wiki):
    world = load_world(wiki / "world.yaml")
    q1 = [{q.id: q for q in world.questions_at(step)}["Q1"] for step in range(3)]
    assert [q.expected for q in q1] == ["Falcon", "Heron", "Heron"]
    assert [q.drifted for q in q1] == [False, True, True]
    assert q1[1].accepted == ("Heron", "Heron team")
    q2 = [{q.id: q for q in world.questions_at(step)}["Q2"] for step in range(3)]
    assert [q.expects_none for q in q2] == [True, True, False] and q2[2].expected == "21"
    assert {q.id: q for q in world.questions_at(0)}["Q3"].caller == frozenset({"finance"})


def test_permissions_and_authority_come_from_path_globs(wiki):
    world = load_world(wiki / "world.yaml")
    assert world.audience_of("wiki/finance/travel.md") == "finance"
    assert world.audience_of("wiki/teams/billing.md") == "public"
    assert [world.authority_rank(p, "owned_by") for p in ("wiki/policies/refunds.md", "wiki/ops/billing.md",
                                                          "wiki/notes/sync.md", "record:cmdb")] == [1, 2, 3, 0]


def test_the_default_scenarios_are_policies_over_the_revision_stream(wiki):
    world = load_world(wiki / "world.yaml")
    assert world.scenario_names == ["Fresh", "StaleGraph", "PartialPages"]  # StalePages needs a system of record
    lagging = [{p.id: p.body for p in world.pages_at("PartialPages", step)} for step in range(3)]
    again = [{p.id: p.body for p in world.pages_at("PartialPages", step)} for step in range(3)]
    assert lagging == again  # seeded


def test_a_snapshot_folder_works_without_git(tmp_path):
    for day, text in (("2022-01-01", "The Falcon team owns billing."), ("2022-03-01", "The Heron team owns billing.")):
        (tmp_path / "snaps" / day / "wiki").mkdir(parents=True)
        (tmp_path / "snaps" / day / "wiki" / "billing.md").write_text(text)
    (tmp_path / "questions.yaml").write_text(QUESTIONS.split("- id: Q2")[0])
    # (without the authority and audience globs: this corpus has no page they could match)
    (tmp_path / "w.yaml").write_text(WORLD.replace("git: repo", "snapshots: snaps").replace(
        "  checkpoints: [2022-02-01, 2022-07-01, 2023-01-01]\n", "").split("authority:")[0])
    world = load_world(tmp_path / "w.yaml")
    assert world.day_keys == ["2022-01-01", "2022-03-01"]
    assert world.pages_at("Fresh", 1)[0].body == "The Heron team owns billing."


@pytest.mark.parametrize("change, message", [
    (lambda w, q: (w.replace("git: repo", "git: nowhere"), q), "corpus: the repository"),
    (lambda w, q: (w.replace("2022-02-01,", "2021-06-01,"), q),
     "checkpoint 2021-06-01 is before the first commit touching the pages (2022-01-10)"),
    (lambda w, q: (w, q.replace("answers: {2022-01-01: Falcon, 2022-06-15: Heron}", "answers: {2022-03-01: Falcon}")
                   .replace("  accepted: {Heron: [Heron team]}\n", "")),  # (Heron is no longer an answer)
     "question Q1: no answer for checkpoint 2022-02-01"),
    (lambda w, q: (w, q.replace("accepted: {Heron: [Heron team]}", "accepted: {Heron: []}")),
     "question Q1: accepted: the accepted spellings of 'Heron' are an empty list"),
    (lambda w, q: (w, q.replace("hops: [owned_by]\n  answers: {2022-01-01: Falcon",
                                "hops: [runs]\n  answers: {2022-01-01: Falcon")),
     "question Q1: hops: unknown relation 'runs'"),
    (lambda w, q: (w.replace("questions: questions.yaml", "questions: missing.yaml"), q), "questions: cannot read"),
])
def test_mistakes_in_a_corpus_world_are_one_line(wiki, change, message):
    world, questions = change(WORLD, QUESTIONS)
    (wiki / "world.yaml").write_text(world)
    (wiki / "questions.yaml").write_text(questions)
    with pytest.raises(WorldFileError) as info:
        load_world(wiki / "world.yaml")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_prose_becomes_units_a_small_model_can_read_one_at_a_time():
    page = textwrap.dedent("""
        # Refunds
        Refunds are quick. Customers get their money back within 21 days.

        ## Plans
        | Plan | Price |
        |---|---|
        | Basic | $12 |

        ## FAQ
        Q: Can I pay by card?
        A: Yes, every major card.

        - Window: 21 days
    """)
    assert [(u.text, u.trail) for u in markdown_units(page)] == [
        ("Refunds are quick.", ("Refunds",)), ("Customers get their money back within 21 days.", ("Refunds",)),
        ("Plan: Basic; Price: $12", ("Refunds", "Plans")),
        ("Can I pay by card? Yes, every major card.", ("Refunds", "FAQ")),
        ("Window: 21 days", ("Refunds", "FAQ")),
    ]
