"""Values for the worked examples in prompts: made-up names, numbers and phrases fitted to each relation's shape
and checked against the world's whole text, so an example never states something about a name the world
really has."""

from __future__ import annotations

import re
from collections.abc import Iterator

_ONSETS = ["Qu", "Zor", "Mal", "Ov", "Kel", "Bris", "Zent", "Vor", "Tam", "Ul", "Dra", "Pel", "Yor", "Fen", "Grav"]
_CODAS = ["vex", "brin", "idra", "vane", "sol", "ara", "mund", "ith", "osk", "erra", "andt", "ulf", "ixa", "orne"]
_SURNAMES = ["Marrow", "Quillon", "Abernathy", "Voskuijl", "Tremaine", "Okonkwo-Hale", "Lindqvist", "Ferreira"]
_FIRST_NAMES = ["Ilka", "Tomasz", "Wrenna", "Odile", "Pim", "Saoirse", "Kwame", "Linnea", "Dario", "Yusra"]
_NOUNS = ["service", "engine", "desk", "board", "tier", "squad", "team", "plan", "hub", "gateway"]
_PHRASES = ["harbour crane scheduler", "invoice matching assistant", "cold storage monitor",
            "fleet fuel tracker", "dock door planner", "parcel weighing station"]


def _words() -> Iterator[str]:
    # Walk onsets and codas on a diagonal, so neighbouring names share neither.
    for i in range(len(_ONSETS) * len(_CODAS)):
        yield _ONSETS[i % len(_ONSETS)] + _CODAS[(i + i // len(_ONSETS)) % len(_CODAS)]


def _numbers() -> Iterator[str]:
    for n in (73, 37, 81, 64, 19, 58, 93, 26, 45, 112, 7, 3):
        yield str(n)
    for integer, part in ((97, 25), (94, 5), (88, 75)):
        yield f"{integer}.{part}"


def _literal_prefix(shape: str) -> str:
    """The literal words a shape starts with ("Tessaly \\w+" -> "Tessaly "), to build names that fit it."""
    match = re.match(r"((?:[A-Za-z0-9]| (?![*+?{]))+)", shape)
    return match.group(1) if match and not re.search(r"[\\\[(]", match.group(1)) else ""


class MadeUpNames:
    """Values that fit a shape and that the world never mentions; each is handed out once."""

    def __init__(self, world_text: str):
        self.world_text = world_text.casefold()
        self.used: set[str] = set()  # words already handed out: no two values share one ("Quvex" / "Quvex Marrow")

    @staticmethod
    def _words(candidate: str, shape: str | None) -> set[str]:
        """A value's own words: not the ones its shape spells out ("Tessaly" in "Tessaly \\w+")."""
        fixed = set(re.findall(r"\w+", _literal_prefix(shape or "").casefold()))
        return set(re.findall(r"\w+", candidate.casefold())) - fixed

    def _fresh(self, candidate: str, shape: str | None) -> bool:
        return candidate.casefold() not in self.world_text and not self._words(candidate, shape) & self.used

    def _candidates(self, shape: str | None, compound: bool) -> Iterator[str]:
        def fits(value: str) -> bool:
            return shape is None or re.fullmatch(shape, value) is not None

        prefix = _literal_prefix(shape or "")
        names = list(_words())
        # The most telling kind first: a phrase for a shape that takes one, a number for one that takes no name.
        if fits(_PHRASES[0]):
            yield from _PHRASES
        if fits("#" + names[0].lower()):  # a channel or tag: "#quvex-service"
            yield from (f"#{n}-{_NOUNS[i % len(_NOUNS)]}".lower() for i, n in enumerate(names))
        if not fits(names[0]):
            yield from _numbers()
        singles = [prefix + n for n in names] + names
        compounds = [f"{n} {_NOUNS[i % len(_NOUNS)]}" for i, n in enumerate(names)]
        # A second example of a relation shows a two-word name where the shape allows one ("Quvex service").
        yield from (compounds + singles) if compound else (singles + compounds)
        for i in range(len(_FIRST_NAMES) * len(_SURNAMES)):
            yield f"{_FIRST_NAMES[i % len(_FIRST_NAMES)]} {_SURNAMES[(i // len(_FIRST_NAMES) + i) % len(_SURNAMES)]}"
        yield from _numbers()
        yield from _PHRASES

    def fit(self, shape: str | None, compound: bool = False) -> str:
        for candidate in self._candidates(shape, compound):
            if (shape is None or re.fullmatch(shape, candidate)) and self._fresh(candidate, shape):
                self.used |= self._words(candidate, shape)
                return candidate
        raise ValueError(f"no made-up value fits the shape {shape!r}")
