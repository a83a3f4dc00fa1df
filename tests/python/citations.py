"""The project's own numbers, which mean nothing to a reader outside the team: the tracker's
(the word issue and a number) and the paper folder's (the word seed and 000 to 009). Papers
are cited by author and year instead (docs/references.md), features by their names. Shared by
test_house_rules.py (the code) and test_user_docs.py (the pages and the command line's help).

A number wrapped onto the next line, behind a comment's leader, still counts. A name with
no space in it, such as the reproduce command's seed004-table2, is not a citation but a name
that docs/references.md defines, and neither pattern matches it."""

from __future__ import annotations

import re

# what may stand between the word and the number: a space, a hyphen, or a line break and the
# next line's indentation and comment leader (C's *, Python's and shell's #, C's //)
_BETWEEN = r"(?:[ \t-]|\n[ \t]*(?:\*|#|//)?[ \t]*)+"
ISSUE_NUMBER = re.compile(rf"\bissues?{_BETWEEN}\d+", re.IGNORECASE)
PAPER_NUMBER = re.compile(rf"\bseeds?{_BETWEEN}00\d\b", re.IGNORECASE)


def numbers_cited(text: str) -> list[tuple[int, str]]:
    """Each tracker or paper-folder number `text` cites, as (line number, the words as
    written), in the order they appear."""
    found = [match for pattern in (ISSUE_NUMBER, PAPER_NUMBER) for match in pattern.finditer(text)]
    return [(text.count("\n", 0, match.start()) + 1, " ".join(match.group().split()))
            for match in sorted(found, key=lambda match: match.start())]
