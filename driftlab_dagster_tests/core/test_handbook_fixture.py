"""The Thistlecombe handbook fixture: a made-up company's prose handbook, built commit by commit into git.

`driftlab_dagster.fixture_repo.build_handbook` builds data/fixtures/thistlecombe/ into a git repository, a
corpus world file and a questions file in the format of docs/your-own-wiki.md. These tests check the fixture
itself, with git and plain file reads only (not the project's loader): the history is long and deterministic,
the pages come in varied styles, every kind of drift the study measures really happens in the history, and
every answer in the questions file is stated, as a whole word, on a page the caller may read at that
checkpoint.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
import yaml

from driftlab_dagster.fixture_repo import HANDBOOK_DIR, HandbookRepo, build_handbook, commit_folders, git

NONE = "none"
# The commits as the tests name them, C01..C17: commit folder NN-slug is CNN.
KEYS = [f"C{folder.name[:2]}" for folder in commit_folders(HANDBOOK_DIR / "commits")]


# ----- reading the repository with git -----

def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: `**/` is zero or more folders, `**` anything, `*` and `?` stay inside a folder."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def _matches(path: str, globs) -> bool:
    return any(_glob(g).match(path) for g in globs)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _has_word(text: str, phrase: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(_flat(phrase)) + r"(?!\w)", _flat(text)) is not None


class Handbook:
    """The built fixture, its world file and questions, and the pages at each checkpoint (read once)."""

    def __init__(self, built: HandbookRepo):
        self.built = built
        self.world = yaml.safe_load(built.world.read_text(encoding="utf-8"))
        self.questions = yaml.safe_load(built.questions.read_text(encoding="utf-8"))
        log = git(built.repo, "log", "--reverse", "--format=%H %ct %s", "main").splitlines()
        self.log = [(sha, dt.datetime.fromtimestamp(int(ts), dt.UTC), msg)
                    for sha, ts, msg in (line.split(" ", 2) for line in log)]
        self.checkpoints: list[dt.date] = list(self.world["corpus"]["checkpoints"])
        self._read: dict[str, dict[str, str]] = {}
        self.pages = {day: self.pages_at_commit(self.commit_at(day)) for day in self.checkpoints}

    def commit_at(self, day: dt.date) -> str:
        """The last commit before `day` at 00:00 UTC."""
        start = dt.datetime.combine(day, dt.time(), dt.UTC)
        before = [sha for sha, when, _ in self.log if when < start]
        assert before, f"no commit before checkpoint {day}"
        return before[-1]

    def pages_at_commit(self, sha: str) -> dict[str, str]:
        """path -> text of every page the world's `paths` globs select in that commit (read once)."""
        if sha not in self._read:
            paths = [p for p in git(self.built.repo, "ls-tree", "-r", "--name-only", sha).splitlines()
                     if _matches(p, self.world["corpus"]["paths"])]
            self._read[sha] = {p: git(self.built.repo, "show", f"{sha}:{p}") for p in paths}
        return self._read[sha]

    def audience(self, path: str) -> str:
        for glob, who in (self.world.get("audience") or {}).items():
            if _glob(glob).match(path):
                return who
        return "public"

    def commit(self, key: str) -> tuple[str, dt.datetime, str]:
        return self.log[KEYS.index(key)]

    def before_and_after(self, key: str) -> tuple[dict[str, str], dict[str, str]]:
        """The pages just before and just after the commit named `key` (C01..C17)."""
        i = KEYS.index(key)
        return (self.pages_at_commit(self.log[i - 1][0]) if i else {}), self.pages_at_commit(self.log[i][0])


def at(entries: dict, day: dt.date):
    """The entry with the latest date on or before `day` (None if there is none)."""
    dates = [d for d in entries if d <= day]
    return entries[max(dates)] if dates else None


def everywhere(pages: dict[str, str]) -> str:
    return "\n".join(pages.values())


@pytest.fixture(scope="module")
def hb(tmp_path_factory: pytest.TempPathFactory) -> Handbook:
    return Handbook(build_handbook(tmp_path_factory.mktemp("handbook")))


# ----- the history -----

def test_the_history_has_at_least_twelve_commits_over_more_than_three_years(hb):
    assert len(hb.log) == len(KEYS) >= 12
    assert [sha for sha, _, _ in hb.log] == list(hb.built.commits)
    dates = [when for _, when, _ in hb.log]
    assert dates == sorted(dates)
    assert (dates[-1] - dates[0]).days > 3 * 365
    assert dates[0].date() == dt.date(2021, 3, 8) and dates[-1].date() == dt.date(2024, 11, 12)
    authors = set(git(hb.built.repo, "log", "--format=%an <%ae> %ad %cd", "--date=raw").splitlines())
    assert all(line.startswith("Thistlecombe Handbook <handbook@thistlecombe.example>") for line in authors)


def test_there_are_five_to_seven_checkpoints_each_after_a_commit_and_none_on_a_commit_day(hb):
    assert 5 <= len(hb.checkpoints) <= 7
    assert hb.checkpoints == sorted(hb.checkpoints) == list(hb.built.checkpoints)
    assert hb.log[0][1].date() < hb.checkpoints[0]
    commit_days = {when.date() for _, when, _ in hb.log}
    assert not commit_days & set(hb.checkpoints), "a commit on a checkpoint day makes 'on or before' ambiguous"
    # every checkpoint sees a different handbook from the one before it
    shas = [hb.commit_at(day) for day in hb.checkpoints]
    assert len(set(shas)) == len(shas)


def test_building_twice_gives_the_same_commit_ids_and_files(hb, tmp_path):
    again = build_handbook(tmp_path)
    assert again.commits == hb.built.commits
    assert again.world.read_bytes() == hb.built.world.read_bytes()
    assert again.questions.read_bytes() == hb.built.questions.read_bytes()


def test_a_second_build_into_the_same_folder_is_refused(hb):
    with pytest.raises(FileExistsError):
        build_handbook(hb.built.root)


# ----- the pages -----

def test_every_checkpoint_has_at_least_25_pages_each_with_a_heading(hb):
    for day, pages in hb.pages.items():
        assert len(pages) >= 25, day
        for path, text in pages.items():
            assert path.startswith("handbook/") and path.endswith(".md")
            assert text.startswith("# "), f"{path} at {day} has no first heading"
    assert "handbook/index.md" in hb.pages[hb.checkpoints[0]]  # `**/` matches no folder too


def test_the_pages_come_in_varied_styles(hb):
    pages = hb.pages[hb.checkpoints[-1]]
    styles = {
        "table": r"^\|.+\|\n\|[-| :]+\|$",
        "bullet list": r"^- \S",
        "numbered steps": r"^1\. .+\n2\. ",
        "### FAQ": r"^### .+\?\n\S",
        "Q:/A: FAQ": r"^Q: .+\?\nA: ",
        "paragraph": r"^[A-Z][^\n|#-]{60,}\n[^\n|#-]{20,}",
    }
    for style, pattern in styles.items():
        having = [p for p, t in pages.items() if re.search(pattern, t, re.MULTILINE)]
        assert having, f"no page has a {style}"
    assert sum(bool(re.search(styles["table"], t, re.MULTILINE)) for t in pages.values()) >= 5
    folders = {p.split("/")[1] for p in pages if p.count("/") > 1}
    assert {"policies", "support", "products", "teams", "tools", "howto", "meetings", "office", "about",
            "benefits", "finance", "people"} <= folders
    assert any("Glossary" in t.splitlines()[0] for t in pages.values())
    meetings = [t for p, t in pages.items() if p.startswith("handbook/meetings/")]
    assert len(meetings) >= 3 and all(re.search(r"^(Attendees|Present):", t, re.MULTILINE) for t in meetings)


# ----- the drift -----

def test_the_company_is_renamed_and_the_old_name_lingers_on_other_pages(hb):
    before, after = hb.before_and_after("C09")
    assert "Thistlecombe Trail Company" not in everywhere(before)
    assert before["handbook/index.md"].startswith("# Welcome to the Thistlecombe Outfitters handbook")
    assert after["handbook/index.md"].startswith("# Welcome to the Thistlecombe Trail Company handbook")
    assert "formerly called Thistlecombe Outfitters" in after["handbook/about/company.md"]
    last = hb.pages[hb.checkpoints[-1]]
    assert "Thistlecombe Outfitters shops close" in last["handbook/office/holidays.md"]  # stale


def test_the_tent_is_renamed_and_repriced_while_its_page_moves(hb):
    before, after = hb.before_and_after("C10")
    assert "Cinderfell" not in everywhere(before)
    assert "The Hollowpine 2P tent costs $289." in before["handbook/products/hollowpine-2p.md"]
    assert "handbook/products/hollowpine-2p.md" not in after
    assert "The Cinderfell 2P tent costs $319." in after["handbook/products/cinderfell-2p.md"]
    assert "| Cinderfell 2P | Tent | $319 |" in after["handbook/products/catalog.md"]


def test_the_inventory_tool_is_renamed_and_changes_owner_but_the_returns_howto_keeps_the_old_name(hb):
    before, after = hb.before_and_after("C07")
    assert "Larder" not in everywhere(before)
    assert "Stockpot is owned by the Platform team." in before["handbook/tools/stockpot.md"]
    assert "Larder is owned by the Retail Systems team." in after["handbook/tools/larder.md"]
    assert "handbook/teams/retail-systems.md" not in before and "handbook/teams/retail-systems.md" in after
    for day in hb.checkpoints:
        assert "Record the item in Stockpot" in hb.pages[day]["handbook/howto/process-a-return.md"]


def test_numbers_change_on_their_policy_and_product_pages(hb):
    def value(day, path, pattern):
        return re.search(pattern, hb.pages[day][path]).group(1)

    refund = [value(d, "handbook/policies/refunds.md", r"request a refund within (\d+) days") for d in hb.checkpoints]
    assert refund == ["30", "45", "45", "45", "45", "60"]
    shipping = [value(d, "handbook/policies/shipping.md", r"Orders over \$(\d+) ship free") for d in hb.checkpoints]
    assert shipping == ["75"] * 3 + ["99"] * 3
    support = [value(d, "handbook/policies/support.md", r"within (\d+) hours") for d in hb.checkpoints]
    assert support == ["48"] * 4 + ["24"] * 2
    member = [value(d, "handbook/policies/membership.md", r"members get (\d+)% off") for d in hb.checkpoints]
    assert member == ["10"] * 5 + ["15"]
    stove = [value(d, "handbook/products/emberline-stove.md", r"costs \$(\d+)\.") for d in hb.checkpoints]
    assert stove == ["64"] * 5 + ["69"]


def test_owners_and_team_leads_change(hb):
    first, last = hb.pages[hb.checkpoints[0]], hb.pages[hb.checkpoints[-1]]
    assert "owned by the Web team" in first["handbook/tools/checkout-service.md"]
    assert "owned by the Commerce team" in last["handbook/tools/checkout-service.md"]
    assert "Checkout service:" in first["handbook/teams/web.md"]
    assert "Checkout service:" not in last["handbook/teams/web.md"]
    assert "Led by Odessa Marchetti." in first["handbook/teams/customer-care.md"]
    assert "Led by Wilhelmina Thorncastle." in last["handbook/teams/customer-care.md"]
    commerce = [hb.pages[d].get("handbook/teams/commerce.md", "") for d in hb.checkpoints]
    assert commerce[0] == ""
    assert "led by Dashiell Oyelaran." in commerce[1] and "led by Fenna Brightwater" in commerce[-1]


def test_the_staff_discount_is_retired_and_later_reinstated(hb):
    stated = ["Staff get a 40% discount on gear" in everywhere(hb.pages[d]) for d in hb.checkpoints]
    assert stated == [True, True, False, False, False, True]
    for day in hb.checkpoints[2:5]:
        assert not re.search(r"\d+% discount", hb.pages[day]["handbook/benefits/staff-perks.md"])
        assert "retired in May 2022" in hb.pages[day]["handbook/benefits/staff-perks.md"]


def test_git_records_pages_moved_and_pages_deleted(hb):
    changes: dict[str, list[list[str]]] = {}
    sha = None
    for line in git(hb.built.repo, "log", "-M", "--name-status", "--format=@%H", "main").splitlines():
        if line.startswith("@"):
            sha = line[1:]
            changes[sha] = []
        elif line.strip():
            changes[sha].append(line.split("\t"))
    by_key = {key: changes[hb.commit(key)[0]] for key in KEYS}
    assert ["R100", "handbook/faq.md", "handbook/support/faq.md"] in by_key["C08"]  # moved unchanged
    assert any(c[0].startswith("R") and c[1:] == ["handbook/tools/stockpot.md", "handbook/tools/larder.md"]
               for c in by_key["C07"])
    assert any(c[0].startswith("R") and c[1:] == ["handbook/products/hollowpine-2p.md",
                                                  "handbook/products/cinderfell-2p.md"] for c in by_key["C10"])
    assert ["D", "handbook/products/trailbox-rental.md"] in by_key["C13"]
    assert ["D", "handbook/office/penlow-office.md"] in by_key["C17"]


def test_stale_mentions_outlive_the_change(hb):
    cp = dict(enumerate(hb.checkpoints))
    faq_before_move = "handbook/faq.md"
    # the FAQ keeps 30 days while the policy says 45, is fixed in April 2023, and is stale again after 60
    assert "within 30 days of purchase" in hb.pages[cp[1]][faq_before_move]
    assert "within 45 days of purchase" in hb.pages[cp[1]]["handbook/policies/refunds.md"]
    assert "within 30 days of purchase" in hb.pages[cp[2]][faq_before_move]
    assert "within 45 days of purchase" in hb.pages[cp[3]]["handbook/support/faq.md"]
    assert "within 45 days of purchase" in hb.pages[cp[5]]["handbook/support/faq.md"]
    assert "within 60 days of purchase" in hb.pages[cp[5]]["handbook/policies/refunds.md"]
    # the catalog keeps the old stove price; the glossary and the FAQ keep the retired rental
    assert "| Emberline stove | Stove | $64 |" in hb.pages[cp[5]]["handbook/products/catalog.md"]
    assert "**Trailbox**" in hb.pages[cp[5]]["handbook/about/glossary.md"]
    assert "ask for a Trailbox" in hb.pages[cp[5]]["handbook/support/faq.md"]
    # the old office page still had the old company name when the company was renamed
    assert "Thistlecombe Outfitters has used" in hb.pages[cp[4]]["handbook/office/penlow-office.md"]


def test_look_alike_sentences_sit_next_to_the_facts(hb):
    for day in hb.checkpoints:
        refunds = hb.pages[day]["handbook/policies/refunds.md"]
        assert "Special orders returned within 14 days are charged a 15% restocking fee." in refunds
        assert re.search(r"request a refund within \d+ days of purchase", refunds)
        tent = next(t for p, t in hb.pages[day].items() if p.startswith("handbook/products/")
                    and re.search(r"2P tent costs \$\d+\.", t))
        assert "footprint ($39)" in tent
        assert "A 5% discount on gift" in hb.pages[day]["handbook/policies/membership.md"]


def test_meeting_notes_carry_draft_numbers_that_no_policy_ever_states(hb):
    last = hb.pages[hb.checkpoints[-1]]
    drafts = [("handbook/meetings/2021-04-27-shipping-review.md", "$60", "handbook/policies/shipping.md"),
              ("handbook/meetings/2023-02-21-tent-naming.md", "$339", "handbook/products/cinderfell-2p.md"),
              ("handbook/meetings/2024-08-13-membership-review.md", "20%", "handbook/policies/membership.md")]
    for notes, number, policy in drafts:
        assert number in last[notes]
        assert re.search(r"[Nn]ot approved", _flat(last[notes]))
        for day in hb.checkpoints:
            assert number not in hb.pages[day].get(policy, ""), (policy, day)


def test_restricted_pages_state_facts_that_no_public_page_states(hb):
    assert hb.world["audience"] == {"handbook/finance/**": "finance", "handbook/people/**": "staff"}
    last = hb.pages[hb.checkpoints[-1]]
    restricted = {p: t for p, t in last.items() if hb.audience(p) != "public"}
    assert 2 <= len(restricted) <= 3
    assert {hb.audience(p) for p in restricted} == {"finance", "staff"}
    public = everywhere({p: t for p, t in last.items() if hb.audience(p) == "public"})
    for text in restricted.values():
        for amount in re.findall(r"\$\d{1,3}(?:,\d{3})+", text):
            assert amount not in public, amount
    for day in hb.checkpoints[:1]:
        assert all(hb.audience(p) == "public" for p in hb.pages[day])  # added in February 2022


# ----- the world file -----

def test_the_world_file_has_the_documented_shape(hb):
    w = hb.world
    assert w["company"] == "Thistlecombe Trail Company" and w["id"] == "thistlecombe_handbook"
    assert w["corpus"]["git"] == "repo" and (hb.built.world.parent / "repo" / ".git").is_dir()
    assert w["corpus"]["paths"] == ["handbook/**/*.md"]
    assert w["questions"] == hb.built.questions.name and hb.built.questions.parent == hb.built.world.parent
    assert 6 <= len(w["predicates"]) <= 10
    for name, p in w["predicates"].items():
        assert re.fullmatch(r"[a-z_]+", name)
        assert len(p["description"]) > 30
        assert p["object"] in {"name", "person", "number", "phrase"} and p["subject"] == "name"
        assert p["cues"] and all(isinstance(c, str) for c in p["cues"])
        assert 1 <= len(p["examples"]) <= 2
        for ex in p["examples"]:
            assert set(ex) <= {"sentence", "subject", "object", "section"} and isinstance(ex["object"], str)
            assert str(ex["object"]).strip("$") in ex["sentence"]
            assert ex["subject"].casefold() in f"{ex.get('section', '')} {ex['sentence']}".casefold()
    ranks = w["authority"]
    assert ranks["handbook/policies/**"] < ranks["handbook/support/**"] < ranks["handbook/meetings/**"]
    assert ranks["handbook/faq.md"] == ranks["handbook/support/**"]
    every_path = set().union(*hb.pages.values())
    for glob in [*ranks, *w["audience"]]:
        assert any(_glob(glob).match(p) for p in every_path), f"{glob} matches no page"
    assert w["naming"]["drop_prefixes"] == ["the "] and " team" in w["naming"]["drop_suffixes"]


def test_the_predicate_examples_use_names_the_handbook_never_mentions(hb):
    corpus = everywhere({f"{d}:{p}": t for d in hb.checkpoints for p, t in hb.pages[d].items()})
    for name, p in hb.world["predicates"].items():
        for ex in p["examples"]:
            words = re.findall(r"(?<!^)(?<![.:] )\b[A-Z][a-z]+\b", ex["sentence"])
            invented = [w for w in words if w not in {"Free", "Refund", "Customer", "Staff"}]
            assert invented, (name, ex["sentence"])
            for word in invented:
                assert not _has_word(corpus, word), f"{name}: {word!r} appears in the handbook"


# ----- the questions -----

def _history(entries) -> dict:
    return entries if isinstance(entries, dict) else {dt.date(2021, 3, 8): entries}


def test_the_questions_file_has_every_kind_of_question(hb):
    qs = hb.questions
    predicates = set(hb.world["predicates"])
    first = hb.checkpoints[0]
    commit_days = {when.date() for _, when, _ in hb.log}
    assert len(qs) >= 30 and len({q["id"] for q in qs}) == len(qs)
    for q in qs:
        assert set(q["hops"]) <= predicates, q["id"]
        assert min(q["answers"]) <= first, q["id"]
        assert all(isinstance(a, str) for a in q["answers"].values()), q["id"]
        assert set(q["answers"]) <= commit_days, f"{q['id']}: an answer changes on a day with no commit"
        assert min(_history(q["entity"])) <= first
        assert set(_history(q["entity"])) <= commit_days
        assert ("{entity}" in q["text"]) == isinstance(q["entity"], dict), q["id"]
        assert set(q.get("evidence") or {}) <= set(q["answers"]), f"{q['id']}: evidence dated apart from an answer"
        for answer, spellings in (q.get("accepted") or {}).items():
            assert answer in q["answers"].values() and spellings, q["id"]
    never_change = [q for q in qs if len(set(q["answers"].values())) == 1 and NONE not in q["answers"].values()]
    assert len(never_change) >= 5
    assert sum(NONE in q["answers"].values() and len(set(q["answers"].values())) > 1 for q in qs) >= 5
    assert sum(isinstance(q["entity"], dict) for q in qs) >= 3
    assert sum(len(q["hops"]) == 2 for q in qs) >= 2
    assert sum(bool(q.get("accepted")) for q in qs) >= 10
    # a restricted fact asked by its audience has an answer; the same question asked by the public has none
    restricted = [q for q in qs if q.get("caller", ["public"]) != ["public"]]
    assert {c for q in restricted for c in q["caller"]} == {"finance", "staff"}
    paired = 0
    for q in restricted:
        if set(q["answers"].values()) == {NONE}:
            continue
        public = [p for p in qs if p.get("caller", ["public"]) == ["public"] and p["text"] == q["text"]
                  and p["hops"] == q["hops"]]
        assert public and all(set(p["answers"].values()) == {NONE} for p in public), q["id"]
        paired += 1
    assert paired >= 2


def _readable(hb: Handbook, q: dict, day: dt.date) -> tuple[dict[str, str], dict[str, str]]:
    """(the pages the caller may read, the public pages) at a checkpoint."""
    caller = set(q.get("caller", ["public"])) | {"public"}
    pages = hb.pages[day]
    return ({p: t for p, t in pages.items() if hb.audience(p) in caller},
            {p: t for p, t in pages.items() if hb.audience(p) == "public"})


def test_every_answer_is_a_whole_word_on_a_page_the_caller_may_read_and_restricted_ones_only_there(hb):
    checked = 0
    for q in hb.questions:
        restricted_caller = q.get("caller", ["public"]) != ["public"]
        for day in hb.checkpoints:
            answer = at(q["answers"], day)
            if answer == NONE:
                continue
            readable, public = _readable(hb, q, day)
            holders = [p for p, t in readable.items() if _has_word(t, answer)]
            assert holders, f"{q['id']} at {day}: {answer!r} is on no page the caller can read"
            if restricted_caller:
                assert all(hb.audience(p) != "public" for p in holders), (q["id"], day, holders)
                assert not any(_has_word(t, answer) for t in public.values()), (q["id"], day)
            if "{entity}" in q["text"]:
                name = at(q["entity"], day)
                assert any(_has_word(t, name) for t in readable.values()), (q["id"], day, name)
            checked += 1
    assert checked >= 100


def test_every_evidence_quote_is_on_its_page_at_each_checkpoint_and_holds_the_answer(hb):
    for q in hb.questions:
        for day in hb.checkpoints:
            answer = at(q["answers"], day)
            if answer == NONE:
                continue
            evidence = at(q.get("evidence") or {}, day)
            assert evidence, f"{q['id']} at {day}: no evidence"
            assert max(d for d in q["evidence"] if d <= day) >= max(d for d in q["answers"] if d <= day), q["id"]
            readable, _ = _readable(hb, q, day)
            page = readable.get(evidence["page"])
            assert page is not None, f"{q['id']} at {day}: {evidence['page']} is not readable then"
            assert _flat(evidence["quote"]) in _flat(page), f"{q['id']} at {day}: quote not on {evidence['page']}"
            assert _has_word(evidence["quote"], answer), (q["id"], day)


def test_a_fact_that_is_gone_leaves_no_sentence_stating_it(hb):
    gone = 0
    for q in hb.questions:
        if len(q["hops"]) != 1 or not q.get("evidence"):
            continue
        for day in hb.checkpoints:
            if at(q["answers"], day) != NONE:
                continue
            earlier = at(q["evidence"], day)
            if earlier is None:
                continue
            readable, _ = _readable(hb, q, day)
            assert not any(_flat(earlier["quote"]) in _flat(t) for t in readable.values()), (q["id"], day)
            gone += 1
    assert gone >= 5
