"""Which clauses an extractive summary keeps: word weights, the value of a clause, and the
greedy pick that fits a token budget (`memory.providers.summarize` cuts the input into `Unit`s and
renders the pick)."""

from __future__ import annotations

import bisect
import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory.providers.sentences import is_number
from memory.providers.tokens import encode


@dataclass(frozen=True)
class Tuning:
    """Scoring knobs, measured on LoCoMo with bench/summarizer_probe.py."""

    decay: float = 0.9
    """Value kept by a word each time a chosen clause already covers it (a topic that comes
    back in a conversation usually comes back with a new fact: 0.6 lost them; repeats of one
    fact are caught by the near-duplicate test, not by this)."""
    first_bonus: float = 1.5
    """Weight multiplier for a word's first mention in the input."""
    salient_boost: float = 2.5
    """Weight multiplier for numbers, dates and capitalised names."""
    question: float = 0.5
    """Value multiplier for questions (the answer usually carries the fact)."""
    favoured: float = 1.5
    """Value multiplier for clauses of the previous summary."""
    fragment: float = 0.3
    """Value multiplier for fragments (no verb, or a dangling conjunction first)."""
    addressed: float = 0.3
    """Value multiplier for clauses about the listener and not the speaker ("You've got
    guts."): in a dialogue a speaker's facts are said in the first person, the replies
    addressed to the other side mostly react to them."""
    overhead: float = 1.0
    """Tokens added to a clause's cost when ranking (separators)."""
    rarity_floor: float = 0.3
    """Weight multiplier for the most common words (lowest single cl100k token ids)."""
    rarity_rank: float = 30000
    """Token id from which a word counts as rare (multiplier 1)."""
    top_up_rounds: int = 2
    """Times a summary that rendered under its budget is picked again with the slack added."""
    number_words: bool = True
    """Numbers in words ("three turtles") count like digits ("3 turtles")."""


TUNING = Tuning()


@dataclass
class Unit:
    """One clause that can be kept or dropped.

        `position` orders the input (previous summary first) and the output; `group` is the
        source line (adjacent clauses of a line rejoin verbatim); `words` are the sorted content
        words (sorted so float sums are identical on every run) and `sequence` the same words in
    their order, repeats kept (what tells "7 costs 9" from "9 costs 7"); `first` are the words first
        mentioned here; `line_cost` / `join_cost` are its tokens when it opens a new output line
        (newline and speaker prefix included) or continues the previous one; `addressed`
        says the clause speaks of the listener only (see `Tuning.addressed`).
    """

    position: int
    group: int
    speaker: str | None
    text: str
    words: tuple[str, ...]
    sequence: tuple[str, ...]
    salient: frozenset[str]
    first: frozenset[str]
    favoured: bool
    fragment: bool
    addressed: bool
    line_cost: int
    join_cost: int

    def continues(self, previous: Unit) -> bool:
        """Return whether the unit goes on the same output line as previous."""
        same_speaker = self.speaker is not None and self.speaker == previous.speaker
        return same_speaker or self.group == previous.group

    def adjacent(self, previous: Unit) -> bool:
        """Return whether the unit directly follows previous in the same source line."""
        return self.group == previous.group and self.position == previous.position + 1


def word_weights(units: Sequence[Unit], tuning: Tuning = TUNING) -> dict[str, float]:
    """Return an IDF weight per content word, boosted for names, numbers and dates."""
    df: Counter[str] = Counter()
    for unit in units:
        df.update(unit.words)
    total = len(units) + 1
    floor, rank = tuning.rarity_floor, tuning.rarity_rank
    weights = {
        word: (math.log(total / count) + 0.5) * _rarity(word, floor, rank)
        for word, count in df.items()
    }
    for unit in units:
        for word in unit.salient:
            weights[word] = (math.log(total / df[word]) + 0.5) * tuning.salient_boost
    return weights


@lru_cache(maxsize=65536)
def _rarity(word: str, floor: float, rank: float) -> float:
    """Return a prior in [floor, 1] that is low for everyday words (short cl100k token id)."""
    ids = encode(" " + word)
    if len(ids) > 1 or floor >= 1:
        return 1.0
    scale = min(1.0, math.log(max(ids[0], 2)) / math.log(rank))
    return floor + (1 - floor) * scale


def unit_value(
    unit: Unit, covered: Counter[str], weights: dict[str, float], tuning: Tuning = TUNING
) -> float:
    """Return the value per token of unit given how often its words are already covered."""
    value = 0.0
    for word in unit.words:
        bonus = tuning.first_bonus if word in unit.first else 1.0
        value += weights[word] * bonus * tuning.decay ** covered[word]
    if unit.favoured:
        value *= tuning.favoured
    if unit.text.endswith("?"):
        value *= tuning.question
    if unit.fragment:
        value *= tuning.fragment
    if unit.addressed:
        value *= tuning.addressed
    return value / (unit.join_cost + tuning.overhead)


def _link(previous: Unit | None, unit: Unit) -> int:
    """Return the tokens unit adds to the output when it follows previous."""
    if previous is None or not unit.continues(previous):
        return unit.line_cost
    if unit.adjacent(previous) or previous.text.endswith((".", "!", "?")):
        return unit.join_cost
    return unit.join_cost + 1


def _near_duplicate(unit: Unit, chosen: dict[str, list[Unit]], number_words: bool) -> bool:
    """Return whether a chosen unit of the same speaker already says what unit says.

    It does when unit's content words appear in it in the same order, or when they share at
    least 80% of their words and the same numbers in the same order. Word sets alone are not
    enough: "Invoice 7 costs 9 dollars" and "Invoice 9 costs 7 dollars" are two facts, and
    so are "two cats and three dogs" and "three cats and two dogs".
    """
    words = set(unit.words)
    numbers = _numbers(unit.sequence, number_words)
    for other in {id(o): o for w in unit.words for o in chosen.get(w, [])}.values():
        if other.speaker != unit.speaker:
            continue
        if _in_order(unit.sequence, other.sequence):
            return True
        overlap = len(words & set(other.words))
        if overlap / len(words | set(other.words)) >= 0.8 and numbers == _numbers(
            other.sequence, number_words
        ):
            return True
    return False


def _in_order(sequence: Sequence[str], other: Sequence[str]) -> bool:
    """Return whether sequence is a subsequence of other (same words, same order)."""
    remaining = iter(other)
    return all(word in remaining for word in sequence)


def _numbers(sequence: Sequence[str], number_words: bool) -> list[str]:
    """Return the words of sequence that are numbers (digits, or number words if
    `number_words`), in order."""
    return [word for word in sequence if is_number(word, words=number_words)]


def _select(
    units: Sequence[Unit],
    weights: dict[str, float],
    budget: int,
    tuning: Tuning,
    *,
    favoured_cap: int | None = None,
    seed: Unit | None = None,
) -> list[Unit]:
    """Return the units picked greedily by marginal value per token, fitting in budget.

    With `favoured_cap`, units of the previous summary take at most that many tokens; a
    `seed` is tried first, before the greedy order.
    """
    favoured_used = 0
    covered: Counter[str] = Counter()
    by_word: dict[str, list[Unit]] = {}
    heap = [
        (-unit_value(unit, covered, weights, tuning), unit.position)
        for unit in units
        if unit is not seed
    ]
    heapq.heapify(heap)
    if seed is not None:
        heapq.heappush(heap, (-math.inf, seed.position))  # popped first
    chosen: list[Unit] = []
    positions: list[int] = []
    used = 0
    while heap:
        stale, position = heapq.heappop(heap)
        unit = units[position]
        current = unit_value(unit, covered, weights, tuning)
        fresh = unit is seed or not heap
        if not fresh and current < -stale - 1e-12 and current < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-current, position))
            continue
        index = bisect.bisect_left(positions, position)
        before = chosen[index - 1] if index else None
        after = chosen[index] if index < len(chosen) else None
        delta = _link(before, unit)
        if after is not None:
            delta += _link(unit, after) - _link(before, after)
        if used + delta > budget or _near_duplicate(unit, by_word, tuning.number_words):
            continue
        if unit.favoured and favoured_cap is not None:
            if favoured_used + delta > favoured_cap:
                continue
            favoured_used += delta
        chosen.insert(index, unit)
        positions.insert(index, position)
        used += delta
        covered.update(unit.words)
        for word in unit.words:
            by_word.setdefault(word, []).append(unit)
    return chosen


def pick(
    units: Sequence[Unit], weights: dict[str, float], room: int, tuning: Tuning = TUNING
) -> list[Unit]:
    """Return the units to keep in room tokens: the greedy pick, new lines included.

    When the previous summary would take everything, it is held to half the room (see
    `extractive_summary`). When one unit alone is worth more than the whole greedy pick (a
    tight budget filled by cheap fragments such as "by Ana" while the phrase with the amount
    and the date would fit on its own), the pick is redone starting from that unit (the
    most valuable one, and the most valuable new one), and the better pick is kept.
    """
    cap: int | None = None
    chosen = _select(units, weights, room, tuning)
    mixed = not all(u.favoured for u in units)
    if mixed and all(u.favoured for u in chosen):
        cap = room // 2
        chosen = _select(units, weights, room, tuning, favoured_cap=cap)
    best = _gain(chosen, weights, tuning)
    fitting = [u for u in units if u.line_cost <= (room if cap is None or not u.favoured else cap)]
    seeds: list[Unit] = []
    for pool in (fitting, [u for u in fitting if not u.favoured]):
        seed = max(pool, key=lambda u: _gain([u], weights, tuning), default=None)
        if seed is not None and _gain([seed], weights, tuning) > best and seed not in seeds:
            seeds.append(seed)
    for seed in seeds:
        seeded = _select(units, weights, room, tuning, favoured_cap=cap, seed=seed)
        gain = _gain(seeded, weights, tuning)
        if gain > best and not (mixed and all(u.favoured for u in seeded)):
            chosen, best = seeded, gain
    return chosen


def _gain(units: Sequence[Unit], weights: dict[str, float], tuning: Tuning) -> float:
    """Return the total value of units, each word's value decaying as it repeats."""
    covered: Counter[str] = Counter()
    total = 0.0
    for unit in units:
        total += unit_value(unit, covered, weights, tuning) * (unit.join_cost + tuning.overhead)
        covered.update(unit.words)
    return total
