"""What a new reader meets, held so it cannot drift: docs/README.md lists every page of docs/;
README, docs/*.md and every `--help` of the command line speak of papers by name, not by the
project's numbers (citations.py), and every paper number that remains as a name
(`papcoll reproduce seed003-table1`, `seed004_figs18_19.png`) is one docs/references.md
defines; every link into a page's section points at a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from citations import ISSUE_NUMBER, PAPER_NUMBER
from papcoll.cli import SUBCOMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
USER_PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
# a paper number inside a name: seed003-table1, sim_seed003.json, seed004_figs18_19.png
PAPER_IN_NAME = re.compile(r"seed(\d{3})", re.IGNORECASE)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
def help_texts() -> dict[str, str]:
    """`papcoll --help` and every subcommand's (a subcommand with its own subcommands, such
    as testbed, with theirs)."""
    parser = build_parser()
    texts = {"papcoll": parser.format_help()}
    pending = [("papcoll", parser)]
    while pending:
        name, current = pending.pop()
        for action in current._actions:
            if not isinstance(action.choices, dict):  # a subcommand's parsers, by name
                continue
            for command, child in action.choices.items():
                texts[f"{name} {command}"] = child.format_help()
                pending.append((f"{name} {command}", child))
    return texts


def defined_paper_numbers() -> set[str]:
    """The paper numbers docs/references.md's table defines (its rows begin `| \\`seedNNN\\``)."""
    return set(re.findall(r"^\| `seed(\d{3})` \|", (DOCS / "references.md").read_text(),
                          re.MULTILINE))


def test_docs_readme_lists_every_page():
    index = (DOCS / "README.md").read_text()
    listed = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    pages = {path.name for path in DOCS.glob("*.md")} - {"README.md"}
    assert pages - listed == set(), "pages of docs/ missing from docs/README.md"
    assert listed - pages == set(), "docs/README.md lists pages that do not exist"


def test_the_readme_points_at_the_docs_index_and_the_references():
    readme = (ROOT / "README.md").read_text()
    assert "docs/README.md" in readme and "docs/references.md" in readme


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda path: path.name)
def test_no_page_cites_the_tracker_or_a_paper_by_number(page):
    text = page.read_text()
    assert ISSUE_NUMBER.findall(text) == []
    if page.name != "references.md":
        assert PAPER_NUMBER.findall(text) == []


def test_no_help_cites_the_tracker_or_a_paper_by_number():
    texts = help_texts()
    assert {f"papcoll {module.__name__.rpartition('.')[2]}" for module in SUBCOMMANDS} \
        <= set(texts) | {"papcoll search"}  # search.py adds `schedules` and `search`
    for command, text in texts.items():
        flat = " ".join(text.split())  # argparse wraps lines: "issue\n 32" is still one
        assert ISSUE_NUMBER.findall(flat) == [], command
        assert PAPER_NUMBER.findall(flat) == [], command
        assert re.findall(r"\bVMs?\b", flat) == [], command  # "this machine", not "this VM"


def test_papcoll_algorithms_names_the_papers():
    from papcoll import algorithms
    for info in algorithms():
        text = f"{info.description} {info.source} {info.limitations}"
        assert ISSUE_NUMBER.findall(text) == [] and PAPER_NUMBER.findall(text) == [], \
            info.name


def test_the_install_lines_build_from_one_source_folder():
    readme = (ROOT / "README.md").read_text()
    assert len(set(re.findall(r"cmake -S (\S+)", readme))) == 1


def test_every_paper_number_left_in_a_name_is_defined():
    defined = defined_paper_numbers()
    assert defined == {"000", "001", "002", "003", "004"}
    sources = {page.name: page.read_text() for page in USER_PAGES}
    sources.update(help_texts())
    for where, text in sources.items():
        assert set(PAPER_IN_NAME.findall(text)) <= defined, where


def test_reproduce_help_names_the_paper_of_every_table():
    text = " ".join(help_texts()["papcoll reproduce"].split())
    for author in ("Proficz et al.", "Patarasuk & Yuan 2009", "Gavahi",
                   "Ruefenacht et al. 2017"):
        assert author in text


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation but - and _
    dropped, spaces made hyphens; a repeated one gets -1, -2, ... Headings inside fenced
    code are not headings."""
    anchors: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"#{1,6} +(.*?) *#* *$", line)
        if not match:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))  # a link: its text
        anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        unique, number = anchor, 0
        while unique in anchors:
            number += 1
            unique = f"{anchor}-{number}"
        anchors.add(unique)
    return anchors


def test_heading_anchors_are_githubs():
    text = "# A `b` (c, d)\n## Patarasuk & Yuan 2009: x\n```\n# not\n```\n## A `b` (c, d)\n"
    assert heading_anchors(text) == {"a-b-c-d", "patarasuk--yuan-2009-x", "a-b-c-d-1"}


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda path: path.name)
def test_every_link_to_a_section_finds_its_heading(page):
    for target in LINK.findall(page.read_text()):
        path, _, anchor = target.partition("#")
        if not anchor or "://" in path:
            continue
        linked = (page.parent / path).resolve() if path else page
        assert linked.is_file(), f"{page.name}: {target}"
        assert anchor in heading_anchors(linked.read_text()), f"{page.name}: {target}"


def test_the_readme_opens_with_what_papcoll_is_then_make_demo_and_make_test():
    """A newcomer read 20 lines of test targets and a status table before learning what
    papcoll is, and never how to run the `papcoll` that `make demo` installs."""
    readme = (ROOT / "README.md").read_text()
    paragraphs = [part for part in readme.split("\n\n") if part.strip()]
    assert paragraphs[0] == "# papcoll"
    assert paragraphs[1].startswith("papcoll is an all-reduce library for MPI programs")
    first_section = readme.index("\n## ")
    assert readme.index("\n## ", first_section + 1) > readme.index("    make test")
    targets = re.findall(r"^    make ([\w-]+)", readme, re.MULTILINE)
    assert targets[:2] == ["demo", "test"]
    assert "|" not in readme[:readme.index("    make test")]  # no table before them
    assert ".venv/bin/papcoll" in readme and ". .venv/bin/activate" in readme


@pytest.mark.parametrize(("page", "documented"), [
    ("python.md", "Communicator("), ("python.md", ".iallreduce("),
    ("python.md", ".allreduce_init("), ("python.md", ".allreduce("),
    ("nonblocking.md", "pc.iallreduce("),
])
def test_documented_python_signatures_name_the_codes_parameters(page, documented):
    """docs/nonblocking.md wrote `pc.iallreduce(send, recv=None ...)` where the code takes
    sendbuf, recvbuf, and docs/python.md's Communicator left out reproducible=: a keyword
    call copied from the docs must work, and every parameter must be documented."""
    import inspect

    pytest.importorskip("mpi4py")
    from papcoll.communicator import Communicator

    text = (DOCS / page).read_text()
    start = text.index(f"`{documented}") + 1 + len(documented)
    written = text[start:text.index(")`", start)]
    names = [part.split("=")[0].strip() for part in written.split(",") if part.strip()]
    method = documented.rstrip("(").split(".")[-1]
    code = Communicator.__init__ if method == "Communicator" else getattr(Communicator, method)
    expected = [name for name in inspect.signature(code).parameters if name != "self"]
    assert names == expected, f"{page}: {documented}{written}) against {expected}"
