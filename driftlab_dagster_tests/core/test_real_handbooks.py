"""Real handbooks, read as a person reads them: the subject in a heading, values in the shapes real text
writes, one normalisation for the graph and the scorer, history as git records it (first-parent, renames),
relation routing that more cues cannot make worse, questions asked in a person's words, and check-world
refusing questions and examples the world cannot back. One test (at least) per problem of issue 20."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.grounding import enumeration, ground, relations_to_ask
from driftlab_dagster.core.model_extractor import ModelExtractor, extraction_calls, relations_of
from driftlab_dagster.core.ontology import Ontology, Predicate, Triple
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.scoring import matches
from driftlab_dagster.core.store import StoredPage
from driftlab_dagster.core.units import Unit, markdown_units
from driftlab_dagster.core.values import VALUE_KINDS, normalise
from driftlab_dagster.core.world import WorldFileError
from driftlab_dagster.core.world.history import load_snapshots
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.core.test_corpus_world import QUESTIONS, WORLD, _commit, make_wiki


def _open(name: str, obj: str = "phrase", cues: tuple[str, ...] = (), question: str = "",
          fixed: str | None = None) -> Predicate:
    return Predicate(name=name, sentence="{subject} — x — {object}.", subject_pattern=None if fixed else
                     VALUE_KINDS["name"], object_pattern=VALUE_KINDS[obj], fixed_subject=fixed, meaning=name,
                     question=question, query=" ".join(cues) or name.replace("_", " "), open=True, cues=cues)


# ----- 1 and 9: structure-aware reading -----

def test_a_paragraph_under_a_heading_carries_the_heading_as_its_subject():
    page = "# Benefits\n\n## Parking\n\nWe pay the whole\nmonthly pass.\n"
    [unit] = markdown_units(page)
    assert unit.text == "We pay the whole monthly pass."  # the hard wrap joined, one sentence
    assert unit.trail == ("Benefits", "Parking")
    benefit = _open("benefit", cues=("pay",))
    kept = ground(Triple("Parking", "benefit", "the whole monthly pass"), benefit, unit.text, unit.context)
    assert kept == Triple("Parking", "benefit", "whole monthly pass")
    assert ground(Triple("Parking", "benefit", "the whole monthly pass"), benefit, unit.text) is None


def test_a_heading_names_the_subject_never_the_value():
    # Seen in the 0.5B model's replies on 18F units: a heading offered as the object ("Onboarding overview" as
    # when a meeting is, "About PPL" as a tool). Every labelled 18F fact writes its object in the unit.
    channel = _open("slack_channel", cues=("reach out",))
    [unit] = markdown_units("# Onboarding overview\n\n## Security\n\nYou can reach out to Tech Operations.\n")
    assert ground(Triple("Tech Operations", "slack_channel", "Onboarding overview"), channel, unit.text,
                  unit.context) is None
    assert ground(Triple("Security", "slack_channel", "Tech Operations"), channel, unit.text,
                  unit.context) == Triple("Security", "slack_channel", "Tech Operations")

def test_a_word_joined_by_an_ampersand_is_one_word():
    # Seen in the 18F study on the 0.5B model: "Project Q" read as a person from "Project Q&A invites".
    lead = _open("led_by", obj="person", cues=("look",))
    said = "Look out for Project Q&A invites in your inbox."
    assert ground(Triple("Engineering", "led_by", "Project Q"), lead, said) is None
    assert not matches("Ask AT&T.", "AT") and matches("Ask AT&T.", "AT&T")


def test_a_part_that_names_nothing_or_holds_the_other_part_is_no_fact():
    # Both seen in the 0.5B model's replies on 18F units: filler as a subject, and the object's span
    # repeated inside the subject.
    contact = _open("contact", cues=("searching",))
    sentence = "Find by their phone numbers by searching the GSA Staff Directory."
    assert ground(Triple("by their", "contact", "GSA Staff Directory"), contact, sentence) is None
    assert ground(Triple("phone numbers by searching the GSA Staff Directory", "contact", "GSA Staff Directory"),
                  contact, sentence) is None
    kept = ground(Triple("phone numbers", "contact", "GSA Staff Directory"), contact, sentence)
    assert kept == Triple("phone numbers", "contact", "GSA Staff Directory")


def test_list_items_keep_their_lead_in_and_table_rows_their_header():
    page = textwrap.dedent("""\
        ---
        title: Leave
        ---
        Annual leave accrues by years of service:

        - Fewer than 3 years: 4 hours per pay period
        - 15+ years: 8 hours per pay period

        | Plan | Price |
        |---|---|
        | Basic | $12 |
    """)
    units = markdown_units(page)
    assert [u.text for u in units] == ["Annual leave accrues by years of service:",
                                       "Fewer than 3 years: 4 hours per pay period",
                                       "15+ years: 8 hours per pay period", "Plan: Basic; Price: $12"]
    assert units[1].lead == "Annual leave accrues by years of service:" and units[1].trail == ("Leave",)
    assert "Section: Leave | Annual leave accrues" in units[1].render()


def test_a_front_matter_title_reads_as_plain_text():
    # Seen in 18F's handbook: `title: Get set up to travel for TTS <em>before</em> GSA onboarding`.
    page = "---\ntitle: Travel <em>before</em> onboarding\n---\nRequest a vendor ID first.\n"
    [unit] = markdown_units(page)
    assert unit.trail == ("Travel before onboarding",)


def test_a_wide_tables_group_row_labels_the_rows_below_it():
    # Seen in Basecamp's public handbook (titles for each role): "| **Skill** |  |  |" above the rows it groups.
    page = textwrap.dedent("""\
        # Titles

        | Category | Senior (L3) | Lead (L4) |
        | --- | --- | --- |
        | **Skill** |  |  |
        | Mastery | Broad depth | Sets the bar |
        | **Engagement** |  |  |
        | Trust | Some review | Little review |

        | Plan | Price |
        |---|---|
        | Basic | |
        | Pro | $12 |
    """)
    units = markdown_units(page)
    assert [(u.lead, u.text) for u in units] == [
        ("Skill", "Category: Mastery; Senior (L3): Broad depth; Lead (L4): Sets the bar"),
        ("Engagement", "Category: Trust; Senior (L3): Some review; Lead (L4): Little review"),
        ("", "Plan: Basic"),  # two columns: an empty price is a missing value, not a group
        ("", "Plan: Pro; Price: $12")]


# ----- 2 and 3: value kinds, one normalisation -----

@pytest.mark.parametrize("kind, written", [
    ("money", "$50.43"), ("money", "$1,000"), ("money", "$48,000 to $56,000"), ("name", "Node.js"), ("name", "3M"),
    ("name", "login.gov"), ("email", "tts-hr@gsa.gov"), ("duration", "6-week"), ("duration", "six weeks"),
    ("duration", "30-day"), ("people", "Ana Pérez, Bo Li and Cy Ode"), ("percentage", "15%"),
    ("url", "https://handbook.tts.gsa.gov/travel"),
    # Seen in 18F's labelled units: magnitudes, words between a number and its unit, ranges with "and"/"or".
    ("money", "$10k"), ("money", "$5M"), ("money", "$2.5 million"), ("duration", "six telework days"),
    ("duration", "240 annual leave hours"), ("duration", "12 administrative workweeks"),
    ("duration", "between one and four years"), ("duration", "four or eight years"), ("duration", "10 work days"),
    ("when", "Wednesdays"), ("when", "Tuesday’s"), ("when", "2:30 pm ET"), ("when", "12:30 p.m. Eastern time"),
    ("when", "9AM PST"), ("when", "September 25th"),
    # Seen in Basecamp's handbook: words between a number and its unit, hyphened.
    ("duration", "7-calendar-day"),
    # Seen in Sourcegraph's: a number written in words and in digits, as policies write one.
    ("duration", "twelve (12) weeks"),
])
def test_values_in_the_shapes_real_text_writes_are_kept_whole(kind, written):
    sentence = f"The value is {written} as of today."
    relation = _open("value_of", obj=kind, cues=("value",))
    kept = ground(Triple("Policy", "value_of", written), relation, sentence, "Policy")
    assert kept is not None and kept.object == written


@pytest.mark.parametrize("answer, expected", [
    ("$1,000", "1000"), ("£20 a day", "20"), ("a 30-day window", "30 days"), ("six weeks", "6 weeks"),
    ("15 percent", "15%"), ("Twenty-five days", "25 days"), ("$10k", "$10,000"), ("$2.5 million", "$2,500,000"),
    ("$75.00", "$75"), ("£1.5bn", "1500000000"), ("12 administrative workweeks", "12 administrative workweek"),
    ("a 7-calendar-day waiting period", "7 calendar days"), ("$300 - $500 a month", "$300–500"),
    ("5 - 7 business days", "5-7 business days"), ("twelve (12) weeks", "12 weeks"),
])
def test_the_scorer_reads_a_value_in_any_of_its_spellings(answer, expected):
    assert matches(answer, expected)
    assert normalise(answer).endswith(normalise(expected)) or normalise(expected) in normalise(answer)


@pytest.mark.parametrize("answer, expected", [
    ("$75.50", "$75"), ("10k steps", "10000"), ("5m", "5000000"), ("$10k", "$1,000"),
])
def test_a_magnitude_or_cents_are_written_out_only_for_an_amount(answer, expected):
    # Only a currency sign makes "k" or "m" a magnitude ("5m" may be minutes or metres), and only zero cents
    # are nothing.
    assert not matches(answer, expected)


def test_a_phrase_of_its_own_between_a_number_and_a_unit_makes_no_duration():
    limit = _open("time_limit", obj="duration", cues=("take",))
    said = "Reviews take one of the days you choose."
    assert ground(Triple("Reviews", "time_limit", "one of the days"), limit, said) is None
    # hyphened words before the unit make a duration only after digits: "a full-day event" states no length
    assert re.fullmatch(VALUE_KINDS["duration"], "7-calendar-day")
    assert not re.fullmatch(VALUE_KINDS["duration"], "a full-day")


def test_the_governed_graph_compares_values_in_the_same_normalisation(world):
    from driftlab_dagster.core.governed import GovernedStore
    from driftlab_dagster.core.governed_resolver import GovernedResolver
    from driftlab_dagster.core.store import StoredPage

    t0 = dt.datetime(2026, 9, 1)
    governed = GovernedStore(world)
    pages = [StoredPage("d15", "a", "", 1, t0), StoredPage("d19", "b", "", 1, t0)]
    governed.apply_page(pages[0], [Triple("Pro", "price", "$1,000")], t0, "m")
    governed.apply_page(pages[1], [Triple("Pro", "price", "1000")], t0, "m")
    resolution = GovernedResolver(governed, pages).resolve("Pro", "price")
    assert resolution.value is not None and not resolution.hedged  # the same value, spelled two ways
    assert {f.value for f in governed.active()} == {"1000"}


# ----- 4: history as git records it -----

def test_a_checkpoint_is_the_branchs_first_parent_line_and_a_page_dates_from_its_merge(tmp_path):
    wiki = make_wiki(tmp_path)
    repo = wiki / "repo"
    env = {**os.environ, "GIT_AUTHOR_DATE": "2022-06-20T10:00:00Z", "GIT_COMMITTER_DATE": "2022-06-20T10:00:00Z"}
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "proposal", "HEAD~2"], check=True, env=env)
    _commit(repo, "2022-06-20T10:00:00Z", {"wiki/finance/travel.md": "# Travel\nThe Osprey team owns travel."},
            "a proposal, merged in August")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-"], check=True)
    merged_at = "2022-08-10T09:00:00Z"
    merge_env = {**os.environ, "GIT_AUTHOR_DATE": merged_at, "GIT_COMMITTER_DATE": merged_at}
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "--no-ff", "-m", "merge the proposal", "proposal"],
                   check=True, env=merge_env)
    world = load_world(wiki / "world.yaml")
    on_july_first = {p.id: p for p in world.pages_at("Fresh", 1)}  # the proposal is not on the branch yet
    assert "Kestrel" in on_july_first["wiki/finance/travel.md"].body
    later = {p.id: p for p in world.pages_at("Fresh", 2)}
    assert "Osprey" in later["wiki/finance/travel.md"].body
    assert later["wiki/finance/travel.md"].updated_at == dt.datetime(2022, 8, 10, 9)  # when it reached the branch


def test_a_page_whose_name_is_not_ascii_is_read_and_followed_through_a_rename(tmp_path):
    # git prints such a path quoted and escaped ("wiki/teams/caf\303\251.md") unless asked for it as it is (-z);
    # read quoted, the page did not match its glob and vanished without a word. Non-English handbooks name files so.
    wiki = make_wiki(tmp_path)
    repo = wiki / "repo"
    _commit(repo, "2022-03-01T10:00:00Z", {"wiki/teams/café.md": "# Café\nThe Falcon team owns the café."}, "café")
    _commit(repo, "2022-04-01T10:00:00Z", {}, "move it", moves={"wiki/teams/café.md": "wiki/teams/Kantine für alle.md"})
    world = load_world(wiki / "world.yaml")
    step = next(i for i, c in enumerate(world.checkpoints) if c.day > dt.date(2022, 4, 1))
    pages = {p.id: p for p in world.pages_at("Fresh", step)}
    assert "The Falcon team owns the café." in pages["wiki/teams/Kantine für alle.md"].body
    assert world.renames_at("Fresh", step)["wiki/teams/café.md"] == "wiki/teams/Kantine für alle.md"


# ----- 5: snapshots as git would read them -----

def test_a_snapshot_page_that_moved_is_the_same_page_and_keeps_its_own_time(tmp_path):
    text = "# Billing\n" + "".join(f"Line {i} of the billing runbook.\n" for i in range(20))
    for day, path in (("2022-01-01", "teams/billing.md"), ("2022-06-01", "ops/billing.md")):
        (tmp_path / day / path).parent.mkdir(parents=True)
        (tmp_path / day / path).write_text(text + ("The Heron team owns billing.\n" if day == "2022-06-01" else ""))
    edited = (tmp_path / "2022-06-01" / "ops/billing.md")
    stamp = dt.datetime(2022, 3, 14, 12, 0, tzinfo=dt.UTC).timestamp()
    os.utime(edited, (stamp, stamp))
    first, second = load_snapshots(tmp_path, ["**/*.md"])
    assert second.renames == {"teams/billing.md": "ops/billing.md"}
    assert second.pages["ops/billing.md"].updated_at == dt.datetime(2022, 3, 14, 12)


# ----- 2 (lists): one reply names one value, a list states them all -----

@pytest.mark.parametrize(("value", "kind", "statement", "expected"), [
    ("pra", "name", "Find us on Slack in #infrastructure, #pra, and #research.", ["infrastructure", "pra", "research"]),
    ("Slack", "name", "We use Google Forms, Slack and Trello for this work.", ["Google Forms", "Slack", "Trello"]),
    ("$75", "money", "Rates are $50, $75 or $100 per day.", ["$50", "$75", "$100"]),
    ("a@b.gov", "email", "Write to a@b.gov or c@d.gov.", ["a@b.gov", "c@d.gov"]),
    ("Bo Li", "person", "Ask Ana Ruiz, Bo Li, and Cy Young.", ["Ana Ruiz", "Bo Li", "Cy Young"]),
])
def test_a_value_written_in_a_list_brings_the_lists_other_values(value, kind, statement, expected):
    assert enumeration(value, VALUE_KINDS[kind], statement) == expected


@pytest.mark.parametrize(("value", "kind", "statement"), [
    ("infrastructure", "name", "Escalate to #infrastructure and ask in #research."),  # a new clause, not an item
    ("10 business days", "duration", "Submit it within 10 business days of returning, and ask."),
    ("Ana Ruiz", "people", "Ask Ana Ruiz, Bo Li, and Cy Young."),  # a list of people is one value already
    ("Slack", "name", "Ask in Slack, or write to the team."),  # the other side is no name
])
def test_a_value_outside_a_list_stays_alone(value, kind, statement):
    assert enumeration(value, VALUE_KINDS[kind], statement) == [value]


def test_the_model_extractor_keeps_every_channel_of_a_list_it_was_given_one_of():
    channel = _open("slack_channel", obj="name", cues=("slack",))
    ontology = Ontology([channel])
    unit = Unit("If you have questions, find us on Slack in #dev, #g-frontend, or #wg-opensource.", ("Engineering",))
    client = CachedClient(ReplayClient(lambda s, u: '{"states": true, "subject": "Engineering", "object": "#dev"}'))
    got = ModelExtractor(ontology, client).extract_unit(unit)
    assert got == [Triple("Engineering", "slack_channel", o) for o in ("dev", "g-frontend", "wg-opensource")]


def test_the_calls_counted_before_a_run_are_the_calls_the_extractor_makes(tmp_path):
    # check-world tells a user what reading their handbook with a model costs before they start a run.
    world = load_world(make_wiki(tmp_path) / "world.yaml")
    pages = [StoredPage(p.id, p.title, p.body, 1, p.updated_at) for p in world.snapshots[0].pages.values()]
    counted = extraction_calls(world.ontology, world.text_units, ((p.body, p.title) for p in pages))
    replay = ReplayClient(lambda system, user: '{"states": false}')
    extractor = ModelExtractor(world.ontology, CachedClient(replay), world_text=world.text, units=world.text_units)
    for page in pages:
        extractor.extract(page)
    assert counted and len(counted) == len(set(replay.calls))


def test_a_garbled_value_is_read_as_the_only_value_of_its_kind_the_statement_writes():
    # Seen in the 0.5B model's replies on 18F units: the relation is right, the value is not the one written.
    limit = _open("time_limit", obj="duration", cues=("within",))
    one = "Submit your travel voucher within ten business days of returning."
    kept = ground(Triple("travel voucher", "time_limit", "10 days"), limit, one)
    assert kept == Triple("travel voucher", "time_limit", "ten business days")
    two = "Submit your voucher within ten business days, or within 30 days if you were abroad."
    assert ground(Triple("voucher", "time_limit", "10 days"), limit, two) is None  # which one: no telling
    tool = _open("uses_tool", obj="name", cues=("use",))  # a name can be any words: never guessed
    assert ground(Triple("Surveys", "uses_tool", "Forms"), tool, "Surveys: we use Google Docs.") is None


def test_a_measure_is_never_a_name():
    # Seen in the 0.5B model's replies on 18F units: "90 days" as the tool for passwords, "80%" as when billable
    # work is scheduled. No labelled name, person or phrase value of the 18F set is an amount, a duration, a
    # percentage, a bare number or an address; a tool that looks like a domain ("cloud.gov") still is a name.
    tool = _open("uses_tool", obj="name", cues=("use", "change"))
    said = "Change your password every 90 days; we use Okta and cloud.gov for it."
    for measure in ("90 days", "90"):
        assert ground(Triple("password", "uses_tool", measure), tool, said) is None
    assert ground(Triple("password", "uses_tool", "Okta"), tool, said) == Triple("password", "uses_tool", "Okta")
    assert ground(Triple("password", "uses_tool", "cloud.gov"), tool, said) is not None
    when = _open("scheduled_on", obj="phrase", cues=("every",))
    assert ground(Triple("billable work", "scheduled_on", "80%"), when, "Bill 80% of your hours every week.") is None
    limit = _open("time_limit", obj="duration", cues=("every",))  # a duration where a duration belongs
    assert ground(Triple("password", "time_limit", "90 days"), limit, said) is not None


def test_a_name_is_cut_free_of_the_words_around_it():
    # Seen in the 0.5B model's replies on 18F units: "and personnel OGC" for one office of a list, "your
    # calendar and" for a tool. No labelled 18F name starts or ends with a word that names nothing.
    handled = _open("handled_by", obj="name", cues=("reviewed",))
    said = "Detail IAAs are reviewed by GSA OHRM, fiscal OGC, and personnel OGC."
    assert ground(Triple("Detail IAAs", "handled_by", "and personnel OGC"), handled, said) \
        == Triple("Detail IAAs", "handled_by", "personnel OGC")
    tool = _open("uses_tool", obj="name", cues=("mark",))
    assert ground(Triple("Travel", "uses_tool", "your calendar and"), tool, "Travel: mark your calendar and go.") \
        == Triple("Travel", "uses_tool", "calendar")
    assert ground(Triple("Travel", "uses_tool", "your and"), tool, "Travel: mark your and go.") is None
    phrase = _open("scheduled_on", obj="phrase", cues=("due",))  # a phrase may start with such a word
    assert ground(Triple("Timesheets", "scheduled_on", "by noon"), phrase, "Timesheets are due by noon.") \
        == Triple("Timesheets", "scheduled_on", "by noon")


def test_a_value_is_read_whole_never_as_a_piece_of_a_number_a_hyphened_word_or_an_address():
    # Seen in the 0.5B model's replies on 18F units: "$3" from "less than $3,500--", "tts" as a tool from
    # "tts-travel@gsa.gov", "gsa.gov" as a channel from "itservicedesk@gsa.gov".
    amount = _open("amount", obj="money", cues=("less than",))
    said = "Purchases that cost less than $3,500-- or $10,000 with approval -- go through C2."
    assert ground(Triple("Purchases", "amount", "$3"), amount, said) is None
    assert ground(Triple("Purchases", "amount", "$3,500"), amount, said) == Triple("Purchases", "amount", "$3,500")
    # With one amount written, "$3" is that amount garbled, read as the statement writes it.
    one = "Purchases that cost less than $3,500-- training or software -- go through C2."
    assert ground(Triple("Purchases", "amount", "$3"), amount, one) == Triple("Purchases", "amount", "$3,500")
    tool = _open("uses_tool", obj="name", cues=("email",))
    mail = "Email completed CGE form to tts-travel@gsa.gov."
    assert ground(Triple("CGE form", "uses_tool", "tts"), tool, mail) is None
    assert ground(Triple("CGE form", "uses_tool", "gsa.gov"), tool, mail) is None
    # A possessive and a final full stop are outside the word: "18F" is written in "18F's", "Okta" in "Okta."
    assert ground(Triple("CGE form", "uses_tool", "18F"), tool, "Email 18F's form desk.") is not None
    assert ground(Triple("CGE form", "uses_tool", "Okta"), tool, "Email the form through Okta.") is not None


@pytest.mark.parametrize("written", ["5-7 business days", "three to six months", "8-15 months", "2 to 3 weeks"])
def test_a_duration_range_stays_a_range(written):
    # Seen in 18F's handbook: "arrive 5-7 business days after placement", "a three to six month process";
    # the duration kind kept only the range's end ("7 business days").
    limit = _open("time_limit", obj="duration", cues=("take",))
    said = f"Orders take {written} to arrive."
    assert ground(Triple("Orders", "time_limit", written), limit, said) == Triple("Orders", "time_limit", written)


def test_a_number_written_as_a_length_of_time_is_no_amount_and_a_rates_unit_no_duration():
    # Seen in the 0.5B model's replies on 18F units: "12" as the amount of "up to 12 weeks of unpaid leave",
    # "72" as the share of "at least 72 hours before", "a month" as how long "$130 a month" lasts.
    amount = _open("amount", obj="money", cues=("up to",))
    share = _open("share", obj="percentage", cues=("at least",))
    leave = "FMLA allows up to 12 weeks of unpaid leave per 12-month period."
    assert ground(Triple("FMLA", "amount", "12"), amount, leave) is None
    assert ground(Triple("ASL form", "share", "72"), share, "File it at least 72 hours before the event.") is None
    # A number written as a number still is one, and an amount with its sign is an amount.
    assert ground(Triple("billable work", "share", "80"), share, "Bill at least 80 of 100 hours as billable work.") \
        is not None
    transit = "Transit subsidies cover travel up to $130 a month."
    assert ground(Triple("Transit subsidies", "amount", "$130"), amount, transit) is not None
    limit = _open("time_limit", obj="duration", cues=("up to", "meets"))
    assert ground(Triple("Transit subsidies", "time_limit", "a month"), limit, transit) is None
    assert ground(Triple("The guild", "time_limit", "a week"), limit, "The guild meets once a week.") is None
    assert ground(Triple("The review", "time_limit", "a week"), limit, "The review takes up to a week.") is not None


def test_a_channel_is_what_the_statement_marks_as_one_or_the_one_word_the_reply_gave():
    # Seen in the 0.5B model's replies on 18F units with the slack_channel relation: "Federal record", "DM
    # channel with yourself", "email or Slack" given as channels; a name kind kept any of them.
    channel = _open("slack_channel", obj="channel", cues=("Slack",))
    marked = "Once approved, Talent adds the posting to #tts-jobs on Slack and the handbook page."
    assert ground(Triple("Talent", "slack_channel", "#tts-jobs"), channel, marked) \
        == Triple("Talent", "slack_channel", "#tts-jobs")
    assert ground(Triple("Talent", "slack_channel", "handbook"), channel, marked) is None  # not the one marked
    unmarked = "Talent: find us on Slack: tts-acqdiv"
    assert ground(Triple("Talent", "slack_channel", "tts-acqdiv"), channel, unmarked) is not None
    record = "Talent: a Slack direct message is a Federal record."
    for reply in ("Federal record", "a Slack direct message"):  # one word of it fits; the reply is no channel
        assert ground(Triple("Talent", "slack_channel", reply), channel, record) is None
    listed = "Talent: find us on Slack in #talent, #benefits, and #hiring."
    client = CachedClient(ReplayClient(lambda s, u: '{"states": true, "subject": "Talent", "object": "#benefits"}'))
    got = ModelExtractor(Ontology([channel]), client).extract_unit(Unit(listed))
    assert [t.object for t in got] == ["#talent", "#benefits", "#hiring"]
    # "#" before digits numbers a thing ("Line #968"); it marks no channel.
    assert ground(Triple("Non-Billable Work", "slack_channel", "#968"), channel,
                  "Non-Billable Work, Line #968 on Slack") is None


@pytest.mark.parametrize("reply, statement", [
    # Seen in the 0.5B model's replies on 18F units with led_by and point_of_contact: a role, an office, an
    # acronym, a form, a place, given as the person.
    ("Director", "The Director of Engineering guides the guild."),
    ("Acting Director", "The Acting Director of Engineering guides the guild."),
    ("Consulting Software Engineer", "Ask a Consulting Software Engineer to guide the guild."),
    ("Infrastructure Leads", "The Infrastructure Leads guide the guild."),
    ("Workforce Relations", "Ask Workforce Relations to guide the guild."),
    ("GSA Press", "Ask GSA Press to guide the guild."),
    ("OPM Form 630", "Send OPM Form 630 to guide the guild."),
])
def test_a_person_is_named_by_given_name_and_surname_never_a_role_or_an_office(reply, statement):
    lead = _open("led_by", obj="person", cues=("guide",))
    assert ground(Triple("Engineering guild", "led_by", reply), lead, statement) is None


@pytest.mark.parametrize("reply", ["Director", "agreed upon", "open until filled", "each week"])
def test_when_something_falls_is_a_weekday_a_time_of_day_or_a_date(reply):
    # Seen in the 0.5B model's replies on 18F units with scheduled_on (then a phrase): a role, words of the
    # sentence, given as when a meeting falls.
    when = _open("scheduled_on", obj="when", cues=("every",))
    said = "Every week the Director meets the team meeting, agreed upon, open until filled, each week on Fridays."
    # A value garbled into words of the sentence is the one weekday it writes, if it writes one; else none.
    assert ground(Triple("team meeting", "scheduled_on", reply), when, said) \
        == Triple("team meeting", "scheduled_on", "Fridays")
    assert ground(Triple("team meeting", "scheduled_on", reply), when, said.replace(" on Fridays", "")) is None


def test_a_role_given_for_the_person_is_read_as_the_one_person_the_statement_names():
    lead = _open("led_by", obj="person", cues=("director",))
    said = "The Director of the Engineering guild is Kelly Olson."
    assert ground(Triple("Engineering guild", "led_by", "Director"), lead, said) \
        == Triple("Engineering guild", "led_by", "Kelly Olson")
    assert ground(Triple("Engineering guild", "led_by", "Director"), lead, said + " Ask Bo Li.") is None


@pytest.mark.parametrize("person", ["Stephanie Rivera", "Amber Van Amburg", "Shashank K", "Marty Sanchez-Lowery",
                                    "Kim O'Neil", "Ana Pérez", "Anna de la Cruz", "An Li"])
def test_a_persons_name_in_its_real_shapes_is_kept(person):
    lead = _open("led_by", obj="person", cues=("guide",))
    said = f"The Engineering guild is guided by {person}, its director."
    assert ground(Triple("Engineering guild", "led_by", person), lead, said) == \
        Triple("Engineering guild", "led_by", person)


@pytest.mark.parametrize("stand_in", ["Person B", "User X", "Employee A.", "Engineer C"])
def test_an_examples_stand_in_for_someone_is_no_person(stand_in):
    # Seen in the 18F study: "Person B" from "Person A has access to something but not Person B" was held as
    # who leads Infrastructure, beside the real lead, and the reader chose it.
    lead = _open("led_by", obj="person", cues=("lead",))
    said = f"The infrastructure lead decides what {stand_in.rstrip('.')} may access."
    assert ground(Triple("infrastructure", "led_by", stand_in), lead, said) is None
    assert ground(Triple("infrastructure", "led_by", "Noah Kunin"), lead, said + " Noah Kunin leads it.") \
        == Triple("infrastructure", "led_by", "Noah Kunin")


@pytest.mark.parametrize("reply", ["system", "tool", "the form"])
def test_a_value_that_only_names_the_relations_kind_is_none(reply):
    # Seen in the 18F study: "system" held as the tool for purchase requests beside "C2"; shown both, the
    # model reader answered "tool".
    tool = _open("uses_tool", cues=("use", "system", "form", "submit"))
    said = f"Purchase requests go in the {reply.removeprefix('the ')} (C2, our request system)."
    assert ground(Triple("Purchase requests", "uses_tool", reply), tool, said) is None
    assert ground(Triple("Purchase requests", "uses_tool", "C2"), tool, said) \
        == Triple("Purchase requests", "uses_tool", "C2")


@pytest.mark.parametrize("reply", ["channel", "slack channel"])
def test_a_channel_that_only_names_the_kind_is_none(reply):
    channel = _open("slack_channel", obj="channel", cues=("slack", "channel"))
    said = f"Ask the Infrastructure team in the {reply}: #infrastructure."
    assert ground(Triple("Infrastructure", "slack_channel", reply), channel, said) is None
    assert ground(Triple("Infrastructure", "slack_channel", "#infrastructure"), channel, said) \
        == Triple("Infrastructure", "slack_channel", "#infrastructure")


@pytest.mark.parametrize("role", ["The Director", "An Engineer", "A Team"])
def test_an_article_starts_no_persons_name(role):
    # "An" is the article before a vowel only ("An Li" above is a given name and a surname)
    lead = _open("led_by", obj="person", cues=("guide",))
    said = f"The Engineering guild is guided by {role}."
    assert ground(Triple("Engineering guild", "led_by", role), lead, said) is None


# ----- 6: relation routing -----

def test_a_relation_is_never_less_likely_to_be_asked_for_having_more_cues():
    leads, owns = _open("led_by", cues=("leads",)), _open("owned_by", cues=("owns",))
    sentence = "The Heron team owns billing and leads the weekly review."
    assert relations_to_ask(sentence, [leads, owns]) == [leads, owns]
    more = _open("led_by", cues=("leads", "lead", "director", "head of"))
    assert more in relations_to_ask(sentence, [more, owns])  # share-based routing dropped it here


def test_a_lone_function_word_is_no_cue_but_a_phrase_with_one_is():
    # 18F's world declared `in` a cue of uses_tool: every statement with "in" was asked which tool it names
    # (58 replies on the 0.5B model's labelled units, 2 of them right).
    tool = _open("uses_tool", obj="name", cues=("use", "in", "in Concur"))
    assert relations_to_ask("Leave is recorded in HR Links.", [tool]) == []
    assert relations_to_ask("Book it in Concur.", [tool]) == [tool]
    assert relations_to_ask("We use HR Links.", [tool]) == [tool]


def test_cues_are_phrases_symbols_and_words_outside_urls():
    shipping = _open("free_shipping_over", cues=("free shipping",))
    discount = _open("discount", cues=("%",))
    assert relations_to_ask("Orders get free shipping over $75.", [shipping]) == [shipping]
    assert relations_to_ask("Shipping is not free for orders.", [shipping]) == []  # the words, not the phrase
    assert relations_to_ask("Members get 15% off.", [discount]) == [discount]
    owns = _open("owned_by", cues=("owns",))
    assert relations_to_ask("See https://wiki.example/owns-and-leads for details.", [owns]) == []



def test_a_cue_word_finds_its_inflections_and_never_a_longer_word_it_starts():
    renamed = _open("formerly_called", cues=("formerly",))
    tool = _open("uses_tool", cues=("in", "form"))
    handled = _open("handled_by", cues=("approves",))
    hours = _open("time_allowance", cues=("of your time",))
    # A shorter word of the text is not the cue it starts: "form" is not "formerly", nor "into" "in".
    assert relations_to_ask("Email the completed form to travel@example.gov.", [renamed]) == []
    assert relations_to_ask("Look into the information first.", [_open("x", cues=("in",))]) == []
    assert relations_to_ask("Email the completed forms to travel.", [tool]) == [tool]  # an inflection
    assert relations_to_ask("Requests are approved by the Travel Office.", [handled]) == [handled]
    assert relations_to_ask("Keep 20% of your timesheet notes.", [hours]) == []
    assert relations_to_ask("Spend 20% of your time on learning.", [hours]) == [hours]
    # A word whose own last letters are "ss" is not a plural: the cue "pass" finds "passes" and "passed".
    parking = _open("amount", cues=("pass",))
    assert relations_to_ask("We pay for two passes a month.", [parking]) == [parking]
    assert relations_to_ask("Your request is passed to the office.", [parking]) == [parking]
    assert relations_to_ask("Pay at the pasta bar.", [parking]) == []

def test_a_relation_is_asked_for_its_cue_in_the_statements_own_section_not_a_chapter_above_it():
    # Seen on 18F: every statement under "## Leave (HR Links)" was asked which tool it names, and the model
    # answered "HR Links" for "You can receive up to 4 hours for each election event."
    page = ("# Leave (HR Links)\n\n## Types of leave\n\n### Voting and poll volunteering\n\n"
            "You can receive up to 4 hours for each election event.\n\n### Annual leave\n\n"
            "Request leave in HR Links before you take it.\n")
    voting, annual = markdown_units(page, "Leave")
    assert voting.own_section == "Leave > Voting and poll volunteering"  # the title, its own heading
    tool = _open("uses_tool", obj="name", cues=("types",))
    allowance = _open("time_allowance", obj="duration", cues=("receive",))
    ontology = Ontology([tool, allowance])
    asked: list[str] = []

    def reply(system: str, user: str) -> str:
        asked.append(user)
        return '{"states": false, "subject": "", "object": ""}'

    extractor = ModelExtractor(ontology, CachedClient(ReplayClient(reply)))
    assert [p.name for p in relations_of(extractor.ontology, voting)] == ["time_allowance"]  # "Types" is a chapter's
    extractor.extract_unit(voting)
    assert len(asked) == 1
    # A cue in the statement's own heading, the page title or the lead-in still routes.
    annual_leave = ModelExtractor(Ontology([_open("x", cues=("annual",))]), CachedClient(ReplayClient(reply)))
    assert [p.name for p in relations_of(annual_leave.ontology, annual)] == ["x"]


# ----- 7: how a relation is asked -----

def test_a_relation_is_asked_in_its_own_words_or_the_askers():
    assert _open("led_by", question="Who leads {subject}?").sub_question("Billing") == "Who leads Billing?"
    assert _open("led_by").sub_question("Billing", asked="Who runs billing now?") == "Who runs billing now?"


def test_the_reader_is_asked_a_relations_question_from_the_world_file_or_the_question_as_written(tmp_path):
    """The whole path: a `question:` in the world file, the study's designs, the model reader's prompt."""
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.study import run_study

    wiki = make_wiki(tmp_path)
    (wiki / "world.yaml").write_text(WORLD.replace(
        "fixed_subject: Refund policy,", "fixed_subject: Refund policy, question: 'How many days is the {subject}?',"))
    world = load_world(wiki / "world.yaml")
    asked: set[str] = set()

    def reader_model(system: str, user: str) -> str:
        asked.add(user.rsplit("Question: ", 1)[-1])
        return "unknown"

    run_study(world, reader=ModelReader(world.ontology, CachedClient(ReplayClient(reader_model))))
    assert "How many days is the Refund policy?" in asked  # the relation's own words
    assert {"Which team owns billing?", "Which team owns travel?"} <= asked  # no template: the asker's
    assert not any(q.startswith("What is the ") for q in asked)  # never the wording built from a name


# ----- 8: check-world refuses what a world cannot back -----

@pytest.mark.parametrize("edit, message", [
    (lambda w, q: (w, q.replace("accepted: {Heron: [Heron team]}", "accepted: {heron: [Heron team], Herron: [x]}")),
     "question Q1: accepted: 'Herron' is not one of its answers"),
    (lambda w, q: (w, q.replace("answers: {2022-01-01: Falcon, 2022-06-15: Heron}",
                                "answers: {2022-01-01: Falcon, 2022-06-15: Heron}\n  evidence: {2022-01-01: "
                                "{page: wiki/teams/billing.md, quote: The Osprey team owns billing}}")),
     "question Q1: evidence: the quote 'The Osprey team owns billing' is not on wiki/teams/billing.md"),
    (lambda w, q: (w, q.replace("answers: {2022-01-01: Falcon, 2022-06-15: Heron}",
                                "answers: {2022-01-01: Falcon, 2022-06-15: Heron}\n  evidence: {2022-01-01: "
                                "{page: wiki/teams/billing.md, quote: The Falcon team owns billing}}")),
     "question Q1: evidence: wiki/teams/billing.md does not exist on 2023-01-01"),
    (lambda w, q: (w, q.replace("entity: Refund policy", "entity: Returns")),
     "question Q2: entity: refund_days has one subject, 'Refund policy'"),
    (lambda w, q: (w.replace("cues: [owns, owned]}", "cues: [owns, owned], examples: [{sentence: The Zorbrin "
                             "team owns Quvex., subject: Quvex service, object: Zorbrin}]}"), q),
     "predicates.owned_by.examples: the subject 'Quvex service' is written neither in its sentence"),
    (lambda w, q: (w.replace("cues: [owns, owned]}", "cues: [owns, owned], examples: [{section: Zorbrin team, "
                             "sentence: Quvex is owned by this team., subject: Quvex, object: Zorbrin}]}"), q),
     "predicates.owned_by.examples: the object 'Zorbrin' is not written in its sentence"),
])
def test_check_world_refuses_questions_and_examples_the_world_cannot_back(tmp_path, edit, message):
    wiki = make_wiki(tmp_path)
    world_text, questions = edit(WORLD, QUESTIONS)
    (wiki / "world.yaml").write_text(world_text)
    (wiki / "questions.yaml").write_text(questions)
    with pytest.raises(WorldFileError) as refused:
        load_world(wiki / "world.yaml")
    assert message in str(refused.value), str(refused.value)


def test_check_world_notes_questions_that_ask_one_slot_for_different_answers(tmp_path):
    # The 18F set asked "Details" the time_limit three times (a detail's increment, its total, the IAA wait).
    wiki = make_wiki(tmp_path)
    assert load_world(wiki / "world.yaml").notes == ()
    twin = """
- id: Q5
  text: How many days does Billing keep a request open?
  entity: billing
  hops: [owned_by]
  answers: {2022-01-01: Falcon, 2022-12-20: Osprey}
"""
    (wiki / "questions.yaml").write_text(QUESTIONS + twin)
    notes = load_world(wiki / "world.yaml").notes
    assert len(notes) == 1 and "questions Q1, Q5 ask the same of Billing (owned_by)" in notes[0]
    assert "at 2022-07-01 (Heron, Falcon)" in notes[0]  # the first checkpoint where they differ
    # Another caller is another slot: what finance may read is not what the public may.
    (wiki / "questions.yaml").write_text(QUESTIONS + twin + "  caller: [finance]\n")
    assert load_world(wiki / "world.yaml").notes == ()


def test_an_accepted_spelling_is_found_whatever_the_case_of_its_answer(tmp_path):
    wiki = make_wiki(tmp_path)
    (wiki / "questions.yaml").write_text(QUESTIONS.replace("accepted: {Heron: [Heron team]}",
                                                           "accepted: {heron: [Heron team]}"))
    q1 = {q.id: q for q in load_world(wiki / "world.yaml").questions_at(1)}["Q1"]
    assert q1.accepted == ("Heron", "Heron team")


def test_the_world_file_path_is_read_relative_to_the_world(tmp_path: Path):
    """(The fixtures above rely on it: a corpus world's repository is relative to its file.)"""
    wiki = make_wiki(tmp_path)
    assert load_world(wiki / "world.yaml").page_count == 5
