"""A corpus world: pages read from a real revision history (docs/your-own-wiki.md).

Loading one reads its repository (or snapshot folders, history.py) once, then its questions and system of
record, and checks every cross-reference at once. It answers everything the study asks of a world, so the
Dagster partitions (scenario x checkpoint), the designs, the checks, the costs and the repair run on it
unchanged.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import ValidationError

from ..ontology import Ontology, Predicate
from ..units import READING_VERSION, Unit, markdown_units
from ..values import VALUE_KINDS
from . import NONE, PUBLIC, Checkpoint, Page, Question, RecordChange, World, WorldFileError
from .common import NamingSpec, slug
from .corpus_spec import CorpusQuestionSpec, CorpusWorldSpec, OpenPredicateSpec, RecordSpec, ScenarioPolicy
from .history import CorpusError, CorpusPage, Snapshot, glob_match, load_git, load_snapshots

MAX_CHECKPOINTS = 200


def _open_predicate(name: str, p: OpenPredicateSpec) -> Predicate:
    """An open relation as the study's ontology needs it. Its `sentence` is only how a stored fact is shown
    (to a reader, in a graph's evidence): "Billing service — owned by — Orion."; a page is never parsed
    with it. Its cues are the ones declared, else the words of its name; its question the one declared,
    else the asker's own question (see Predicate.sub_question)."""
    words = name.replace("_", " ")
    sentence = (f"{p.fixed_subject} — {words} — {{object}}." if p.fixed_subject
                else f"{{subject}} — {words} — {{object}}.")
    examples = tuple((e.sentence, e.subject or (p.fixed_subject or ""), e.object, e.section) for e in p.examples)
    return Predicate(name=name, sentence=sentence, subject_pattern=None if p.fixed_subject else VALUE_KINDS[p.subject],
                     object_pattern=VALUE_KINDS[p.object], fixed_subject=p.fixed_subject, meaning=p.description,
                     question=p.question or "", query=" ".join(p.cues) or words, is_rename=p.rename,
                     examples=examples, open=True, cues=tuple(p.cues))


def _folded(text: str) -> str:
    """Text compared as a reader would: case folded, white space (a hard wrap) collapsed."""
    return " ".join(text.casefold().split())


def _raise_all(problems: list[str]) -> None:
    """One WorldFileError naming every problem, one line each."""
    if problems:
        raise WorldFileError("\n".join(dict.fromkeys(problems)))


class CorpusWorld(World):
    """A world read from a revision history. Loading it reads the repository (or folders) once."""

    def __init__(self, spec: CorpusWorldSpec, source: str = "<memory>"):
        self.spec = spec
        self.source = source
        base = Path(source).resolve().parent if Path(source).exists() else Path.cwd()
        self.base = base
        self.ontology = Ontology([_open_predicate(n, p) for n, p in spec.predicates.items()])
        self._notes: list[str] = []
        try:
            if spec.corpus.git is not None:
                snapshots = load_git(base / spec.corpus.git, spec.corpus.paths, spec.corpus.checkpoints or "commits",
                                     self._notes)
            else:
                # CorpusSpec._one_source: without `git`, `snapshots` is set
                snapshots = load_snapshots(base / cast(str, spec.corpus.snapshots), spec.corpus.paths, self._notes)
        except CorpusError as e:
            raise WorldFileError(f"{source}: corpus: {e}") from None
        if len(snapshots) > MAX_CHECKPOINTS:
            raise WorldFileError(f"{source}: corpus: {len(snapshots)} checkpoints, at most {MAX_CHECKPOINTS}: pick "
                                 "dates instead of every commit")
        self.snapshots: list[Snapshot] = snapshots
        self.checkpoints = [Checkpoint(i, s.day, dt.datetime.combine(s.day, dt.time()))
                            for i, s in enumerate(snapshots)]
        self.start = self.checkpoints[0].at
        self.scenarios = spec.scenarios or self._default_scenarios()
        self.questions_spec = self._load_questions()
        self.records = self._load_records()
        self._check_references()
        self._notes += self._one_slot_notes()

    # ----- loading the side files -----
    def _side_file(self, name: str, what: str) -> Any:
        path = self.base / name
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise WorldFileError(f"{self.source}: {what}: cannot read {path} "
                                 f"({e.strerror or type(e).__name__})") from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise WorldFileError(f"{path}: not valid YAML{where}") from None

    def _load_questions(self) -> list[CorpusQuestionSpec]:
        raw = self.spec.questions
        where = str(self.base / raw) if isinstance(raw, str) else self.source
        items = self._side_file(raw, "questions") if isinstance(raw, str) else raw
        if not isinstance(items, list) or not items:
            raise WorldFileError(f"{where}: a questions file is a list of questions (id, text, entity, hops, answers)")
        questions, problems = [], []
        for n, item in enumerate(items):
            try:
                questions.append(item if isinstance(item, CorpusQuestionSpec)
                                 else CorpusQuestionSpec.model_validate(item))
            except ValidationError as e:
                qid = item.get("id", n) if isinstance(item, dict) else n
                for err in e.errors():
                    field = ".".join(str(p) for p in err["loc"])
                    problems.append(f"{where}: question {qid}: {field}: {err['msg'].removeprefix('Value error, ')}")
        _raise_all(problems)
        return questions

    def _load_records(self) -> list[RecordSpec]:
        raw = self.spec.system_of_record
        if raw is None:
            return []
        items = self._side_file(raw, "system_of_record") if isinstance(raw, str) else raw
        records, problems = [], []
        for n, item in enumerate(items or []):
            try:
                records.append(item if isinstance(item, RecordSpec) else RecordSpec.model_validate(item))
            except ValidationError as e:
                problems += [f"{self.source}: system_of_record[{n}]: {'.'.join(map(str, err['loc']))}: {err['msg']}"
                             for err in e.errors()]
        _raise_all(problems)
        return sorted(records, key=lambda r: r.date)

    def _default_scenarios(self) -> dict[str, ScenarioPolicy]:
        scenarios = {"Fresh": ScenarioPolicy(pages="all", graph="patch_changed_pages"),
                     "StaleGraph": ScenarioPolicy(pages="all", graph="none"),
                     "PartialPages": ScenarioPolicy(pages="lagging", graph="patch_changed_pages")}
        if self.spec.system_of_record is not None:
            scenarios["StalePages"] = ScenarioPolicy(pages="none", graph="patch_from_record")
        return scenarios

    def _check_references(self) -> None:
        """Every cross-reference mistake at once, one line each (a user fixes them in one pass)."""
        days = [c.day for c in self.checkpoints]
        seen: set[str] = set()
        problems: list[str] = []
        for q in self.questions_spec:
            where = f"{self.source}: question {q.id}"
            if q.id in seen:
                problems.append(f"{where}: the id is used twice")
            seen.add(q.id)
            problems += [f"{where}: hops: unknown relation {hop!r} (known: {', '.join(self.ontology.names)})"
                         for hop in q.hops if hop not in self.ontology]
            first = min(q.answers)
            if first > days[0]:
                problems.append(f"{where}: no answer for checkpoint {days[0]} (its first answer is dated {first}); "
                                "give one dated on or before it (none if the wiki does not say)")
            if isinstance(q.entity, dict) and min(q.entity) > days[0]:
                problems.append(f"{where}: entity: no name for checkpoint {days[0]}")
            problems += self._question_problems(q, where)
        for name, predicate in self.spec.predicates.items():
            for example in predicate.examples:
                # As grounding reads: a subject may come from the section (the heading names it), an object
                # only from the sentence; an example that breaks this teaches what grounding drops.
                written = _folded(f"{example.section}\n{example.sentence}")
                if example.subject and _folded(example.subject) not in written:
                    problems.append(f"{self.source}: predicates.{name}.examples: the subject {example.subject!r} is "
                                    f"written neither in its sentence {example.sentence[:50]!r} nor in its section; "
                                    "copy it from the sentence, or give the heading that names it as `section:`")
                if example.object and _folded(example.object) not in _folded(example.sentence):
                    problems.append(f"{self.source}: predicates.{name}.examples: the object {example.object!r} is not "
                                    f"written in its sentence {example.sentence[:50]!r}; copy it from the sentence "
                                    "(a value is read from the sentence, never from its section)")
        problems += self._permission_problems()
        for r in self.records:
            if r.rename is None and not (r.subject and r.predicate and r.object):
                problems.append(f"{self.source}: system_of_record: the record of {r.date} needs subject, predicate "
                                "and object, or a rename")
            if r.predicate and r.predicate not in self.ontology:
                problems.append(f"{self.source}: system_of_record: unknown relation {r.predicate!r}")
        _raise_all(problems)

    def _one_slot_notes(self) -> list[str]:
        """Questions that ask one entity the same relations (as the same caller) but expect different answers
        on one checkpoint: a graph keeps one answer per entity and relation, so its designs can be right on
        one of them at most, whatever the extraction. One note per such group, at the first checkpoint it
        shows; a note, not an error: the page designs can read both, and a world may mean it."""
        notes: dict[tuple[str, ...], str] = {}
        for checkpoint in self.checkpoints:
            asked: dict[tuple[str, tuple[str, ...], frozenset[str]], list[tuple[str, str, str]]] = {}
            for q in self.questions_spec:
                entity = q.entity if isinstance(q.entity, str) else self._as_of(q.entity, checkpoint.day)
                asked.setdefault((_folded(entity), tuple(q.hops), frozenset(q.caller)), []).append(
                    (q.id, entity, self._as_of(q.answers, checkpoint.day)))
            for (_, hops, _), found in asked.items():
                ids = tuple(qid for qid, _, _ in found)
                if len({_folded(answer) for _, _, answer in found}) > 1 and ids not in notes:
                    notes[ids] = (f"questions {', '.join(ids)} ask the same of {found[0][1]} ({', '.join(hops)}) but "
                                  f"expect different answers at {checkpoint.day} "
                                  f"({', '.join(answer for _, _, answer in found)}): a graph keeps one answer per "
                                  "entity and relation, so its designs can be right on one of them at most; give "
                                  "each question the name its page uses for what it asks")
        return list(notes.values())

    def _permission_problems(self) -> list[str]:
        """Globs and callers that name nothing. Both fail open or closed without a word: an audience glob
        with a typo leaves the pages it meant public, an authority glob leaves its pages at the default
        rank, and a caller whose audience no page has reads the public pages only."""
        paths = sorted({pid for s in self.snapshots for pid in s.pages})
        problems = []
        example = f", e.g. {paths[0]!r}" if paths else ""
        for section, globs, effect in (("audience", self.spec.audience, f"stay {PUBLIC}"),
                                       ("authority", self.spec.authority, "keep the default rank 2")):
            for glob in globs:
                if not any(glob_match(path, glob) for path in paths):
                    problems.append(f"{self.source}: {section}: the glob {glob!r} matches no page at any checkpoint, "
                                    f"so the pages it was meant for {effect}; a glob matches a page's whole path "
                                    f"in the corpus{example}; check its spelling")
        held = {self.audience_of(path) for path in paths} | {PUBLIC}
        for q in self.questions_spec:
            problems += [f"{self.source}: question {q.id}: caller: no page has the audience {audience!r} (pages "
                         f"have: {', '.join(sorted(held))}); use one of those, or give pages it under `audience:`"
                         for audience in q.caller if audience not in held]
        return problems

    def _question_problems(self, q: CorpusQuestionSpec, where: str) -> list[str]:
        """What a question says that its world cannot back: accepted spellings of an answer it never gives,
        an entity that is not the one subject its relation has, and evidence that is not on the page it
        names at a checkpoint it answers."""
        problems = []
        answers = {_folded(a) for a in q.answers.values()}
        given = ", ".join(sorted(set(q.answers.values())))
        problems += [f"{where}: accepted: {key!r} is not one of its answers ({given})"
                     for key in q.accepted if _folded(key) not in answers]
        fixed = self.ontology[q.hops[0]].fixed_subject if q.hops and q.hops[0] in self.ontology else None
        names = q.entity.values() if isinstance(q.entity, dict) else [q.entity]
        if fixed and any(self.name_key(n) != self.name_key(fixed) for n in names):
            problems.append(f"{where}: entity: {q.hops[0]} has one subject, {fixed!r}; ask about it (entity: {fixed})")
        for c, snapshot in zip(self.checkpoints, self.snapshots):
            dated = [d for d in q.evidence if d <= c.day]
            # Before its first answer a question has none to back (that is its own "no answer" line).
            if not dated or min(q.answers) > c.day or self._as_of(q.answers, c.day) == NONE:
                continue
            evidence = q.evidence[max(dated)]
            page = snapshot.pages.get(evidence.page)
            if page is None:
                problems.append(f"{where}: evidence: {evidence.page} does not exist on {c.key}; name the page as it "
                                "was then (add an evidence entry dated when it moved)")
            elif evidence.quote and _folded(evidence.quote) not in _folded(page.body):
                problems.append(f"{where}: evidence: the quote {evidence.quote[:50]!r} is not on {evidence.page} on "
                                f"{c.key}; copy it from the page as it was then")
        return problems

    # ----- identity: the file, its side files and the corpus it read -----
    @cached_property
    def canonical_json(self) -> str:
        digest = hashlib.sha256()
        for s in self.snapshots:
            digest.update(s.day.isoformat().encode())
            for page in s.pages.values():
                digest.update(f"{page.id}\0{page.updated_at.isoformat()}\0{page.body}\0".encode())
            # Pages too big to read are part of the corpus all the same: a new version of one is a new world.
            # (Nothing is added when nothing was skipped, so such a world keeps the version it had.)
            for path, size_and_hash in sorted(s.skipped.items()):
                digest.update(f"skipped\0{path}\0{size_and_hash}\0".encode())
        return json.dumps({"spec": self.spec.model_dump(mode="json"),
                           "questions": [q.model_dump(mode="json") for q in self.questions_spec],
                           "records": [r.model_dump(mode="json") for r in self.records],
                           "corpus": digest.hexdigest(), "reading": READING_VERSION}, ensure_ascii=False)

    @property
    def id(self) -> str:
        return self.spec.id or slug(self.spec.company)

    @cached_property
    def text(self) -> str:
        """The world's own words: page texts, question texts, the file."""
        pages = "\n".join(p.body for s in self.snapshots for p in s.pages.values())
        return f"{self.canonical_json}\n{pages}"

    @property
    def company(self) -> str:
        return self.spec.company

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

    @property
    def page_count(self) -> int:
        return len({pid for s in self.snapshots for pid in s.pages})

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.questions_spec]

    @property
    def scenario_names(self) -> list[str]:
        return list(self.scenarios)

    def text_units(self, body: str, title: str = "") -> list[Unit]:
        """A markdown page read as a person reads it (units.py): statements with their heading trail."""
        return markdown_units(body, title)

    def scenario_graph_policy(self, scenario: str) -> str:
        return self.scenarios[scenario].graph

    def scenario_pages_policy(self, scenario: str) -> str:
        return self.scenarios[scenario].pages

    # ----- who may read what, and whom to believe -----
    def audience_of(self, page_id: str) -> str:
        for glob, audience in self.spec.audience.items():
            if glob_match(page_id, glob):
                return audience
        return PUBLIC

    def authority_rank(self, source: str, predicate: str) -> int:
        if source.startswith("record:"):
            return self.RECORD
        for glob, rank in self.spec.authority.items():
            if glob_match(source, glob):
                return rank
        return self.MENTION

    @property
    def naming(self) -> NamingSpec:
        return self.spec.naming

    # ----- pages -----
    def _page(self, p: CorpusPage) -> Page:
        return Page(p.id, p.title, p.body, p.updated_at, self.audience_of(p.id))

    def _lags(self, scenario: str, page_id: str, step: int) -> bool:
        policy = self.scenarios[scenario]
        draw = int(hashlib.sha256(f"{policy.seed}|{page_id}|{step}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return draw < policy.lag

    def pages_at(self, scenario: str, step: int) -> list[Page]:
        policy = self.scenarios[scenario].pages
        if policy == "none":
            return [self._page(p) for p in self.snapshots[0].pages.values()]
        now = self.snapshots[step].pages
        if policy == "all" or step == 0:
            return [self._page(p) for p in now.values()]
        # lagging: a seeded share of the pages that changed at this step still show the previous checkpoint
        before = self.snapshots[step - 1].pages
        moved = {new: old for old, new in self.snapshots[step].renames.items()}
        pages = []
        for pid, page in now.items():
            old = before.get(moved.get(pid, pid))
            if (old is None or old.body != page.body) and self._lags(scenario, pid, step):
                if old is not None:
                    pages.append(self._page(CorpusPage(pid, old.title, old.body, old.updated_at)))
                continue  # a new page that lags is not there yet
            pages.append(self._page(page))
        return pages

    def renames_at(self, scenario: str, step: int) -> dict[str, str]:
        if self.scenarios[scenario].pages == "none" or step == 0:
            return {}
        return dict(self.snapshots[step].renames)

    # ----- questions -----
    @staticmethod
    def _as_of(values: dict[dt.date, str], day: dt.date) -> str:
        return values[max(d for d in values if d <= day)]

    def questions_at(self, step: int) -> list[Question]:
        day, first = self.checkpoints[step].day, self.checkpoints[0].day
        questions = []
        for q in self.questions_spec:
            entity = q.entity if isinstance(q.entity, str) else self._as_of(q.entity, day)
            first_entity = q.entity if isinstance(q.entity, str) else self._as_of(q.entity, first)
            expected = self._as_of(q.answers, day)
            drifted = expected.casefold() != self._as_of(q.answers, first).casefold() or entity != first_entity
            accepted = (expected, *next((v for k, v in q.accepted.items() if _folded(k) == _folded(expected)), []))
            questions.append(Question(q.id, 0, q.text.replace("{entity}", entity), entity, tuple(q.hops), expected,
                                      drifted=drifted, accepted=accepted, caller=frozenset(q.caller)))
        return questions

    # ----- the system of record, and what changed -----
    def record_changes(self, step: int) -> list[RecordChange]:
        if step == 0:
            return []
        since, until = self.checkpoints[step - 1].day, self.checkpoints[step].day
        changes: list[RecordChange] = []
        for r in self.records:
            if since < r.date <= until:
                if r.rename is not None:
                    changes.append(("rename", (r.rename["to"], r.rename["from"]), r.source))
                else:
                    # a record without a rename has all three (checked when the world loaded)
                    changes.append(("fact", cast("tuple[str, str, str]", (r.subject, r.predicate, r.object)), r.source))
        return changes

    def changes(self) -> list[dict[str, str]]:
        rows = []
        for prev, snap in zip(self.snapshots, self.snapshots[1:]):
            before, now = prev.pages, snap.pages
            edited = [p for p in now if p in before and before[p].body != now[p].body]
            added = [p for p in now if p not in before and p not in snap.renames.values()]
            removed = [p for p in before if p not in now and p not in snap.renames]
            rows.append({"day": snap.day.isoformat(), "edited": str(len(edited)), "added": str(len(added)),
                         "removed": str(len(removed)), "moved": str(len(snap.renames))})
        return rows
