"""The session score: each question counts once, on the first answer that could be read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    """First verdicts by question uid; a second try at the same question teaches but does not count."""

    first: tuple[tuple[str, bool], ...] = ()

    def record(self, uid: str, correct: bool) -> Score:
        """This score with one more verdict (unchanged when the question was already answered)."""
        if any(seen == uid for seen, _ in self.first):
            return self
        return Score((*self.first, (uid, correct)))

    @property
    def answered(self) -> int:
        """Questions answered so far."""
        return len(self.first)

    @property
    def right(self) -> int:
        """Questions answered right on the first try."""
        return sum(correct for _, correct in self.first)
