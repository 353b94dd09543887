"""Judge replies where reading the verdict is not obvious, with what each rule makes of them.

``leval`` is L-Eval's llm_eval.py rule: ``"[[A]]" in reply``, then ``[[B]]``, then ``[[C]]``,
else an error. ``last_token`` is the default profile's rule: the last ``[[X]]`` token, spaces
inside the brackets allowed. Verdicts: "A", "B", "C" (tie) or None (error).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrickyReply:
    name: str
    reply: str
    leval: str | None
    last_token: str | None

    @property
    def flips(self) -> bool:
        """True when the two rules read this reply differently."""
        return self.leval != self.last_token


TRICKY_REPLIES: tuple[TrickyReply, ...] = (
    TrickyReply("quotes_format_then_b",
                'The format is "[[A]]" if A is better, "[[B]]" if B is better, "[[C]]" for a tie. '
                "Assistant B follows the reference more closely.\n\nFinal verdict: [[B]]", "A", "B"),
    TrickyReply("spaced_brackets", "Assistant B is more faithful to the reference. [[ B ]]", None, "B"),
    TrickyReply("changes_mind_a_to_b", "At first sight [[A]] seems right, but on reflection: [[B]]", "A", "B"),
    TrickyReply("b_then_tie", "I lean towards [[B]]; yet both miss the key date, so: [[C]]", "B", "C"),
    TrickyReply("tie_then_b", "Not a tie ([[C]]): B is closer to the reference. [[B]]", "B", "B"),
    TrickyReply("newline_inside", "Verdict:\n[[\nA\n]]", None, "A"),
    TrickyReply("b_then_a", "Tempted by [[B]], but A is correct. [[A]]", "A", "A"),
    TrickyReply("lowercase", "Final verdict: [[a]]", None, None),
    TrickyReply("not_a_letter", "Final verdict: [[D]]", None, None),
    TrickyReply("triple_brackets", "Final verdict: [[[A]]]", "A", "A"),
    TrickyReply("single_brackets", "Final verdict: [B]", None, None),
    TrickyReply("fullwidth_brackets", "最终结论：［［A］］", None, None),
    TrickyReply("plain_tie", "Both are equally good. [[C]]", "C", "C"),
    TrickyReply("empty", "", None, None),
    TrickyReply("api_error_marker", "$ERROR$", None, None),
    TrickyReply("markdown_bold", "**Final verdict: [[B]]**", "B", "B"),
    TrickyReply("slash", "Final verdict: [[A/B]]", None, None),
    TrickyReply("a_mentioned_inside_word", "Answer [[A]]ssistant B is better: [[B]]", "A", "B"),
)
