"""The Markdown parser (``.md`` and friends): readable text, heading sections, front matter.

markdown-it-py (CommonMark, plus GFM tables and strikethrough; typographer off, since its
smart quotes are quadratic) turns the source into tokens; only text is kept from them:
paragraphs, headings (ATX and setext), list items one per line, code blocks verbatim, table rows
with cells joined by `` | ``, link text (not the URL), image alt text, and the readable text of
raw HTML blocks.  Inline markup is dropped.  Each block is appended to a
:class:`~plugins.parsers.assembly.TextAssembler`, so a heading's offset in the text is recorded
as it is emitted and is exact by construction (no mapping of ``token.map`` source lines back to
text is needed).

The title is the front matter's ``title``, else the first level-1 heading, else the file name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.plugin_api import ParsedDocument, ParseLimits
from plugins.parsers.assembly import TextAssembler, title_from_name
from plugins.parsers.decoding import decode, normalise_newlines, strip_controls
from plugins.parsers.front_matter import split_front_matter
from plugins.parsers.html import HtmlTextExtractor
from plugins.parsers.limits import check_bytes
from plugins.parsers.sectioning import paragraph_sections, sections_from_headings

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_TEXT_TOKENS = frozenset({"text", "text_special", "code_inline"})


class MarkdownParser:
    """CommonMark with GFM tables, front matter in a leading ``---`` block."""

    name: str = "markdown"
    version: str = "3"  # 2: numeric character references of any length are read, never a crash; 3: tables
    extensions: tuple[str, ...] = (".md", ".markdown", ".mdown", ".mkd", ".mkdn")
    mime_types: tuple[str, ...] = ("text/markdown", "text/x-markdown")

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        """Extract ``data``'s readable text and structure (see the module docstring)."""
        check_bytes(data, limits)
        decoded = decode(data)
        source = strip_controls(normalise_newlines(decoded.text))
        front = split_front_matter(source)
        assembler = TextAssembler(limits)
        _render(_markdown().parse(source[front.body_start :]), assembler)
        text = assembler.text()
        sections = sections_from_headings(text, assembler.headings) or paragraph_sections(text)
        first_h1 = next((h.title for h in assembler.headings if h.level == 1), "")
        return ParsedDocument(
            text=text,
            sections=sections,
            title=front.metadata.get("title") or first_h1 or title_from_name(name),
            metadata={"encoding": decoded.encoding, **front.metadata},
            warnings=decoded.warnings,
            tables=assembler.tables,
        )


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # The commonmark preset has typographer and linkify off; keep them off explicitly.
    md = MarkdownIt("commonmark", {"typographer": False, "linkify": False})
    return md.enable(["table", "strikethrough"])


def _render(tokens: Sequence[Token], out: TextAssembler) -> None:
    """Append the readable text of a block token stream to ``out``."""
    walk = _Walk(out)
    for token in tokens:
        step = _STEPS.get(token.type)
        if step is not None:
            step(walk, token)


class _Walk:
    """Where a pass over the block tokens stands: inside a heading (its level), how deep in lists, whether the
    current paragraph is a tight list item, and the cells of the table row being read."""

    def __init__(self, out: TextAssembler) -> None:
        self.out = out
        self.heading_level = 0
        self.list_depth = 0
        self.tight_item = False
        self.row: list[str] | None = None

    def inline(self, token: Token) -> None:
        text = _inline_text(token.children or ())
        if self.heading_level:
            self.out.add_heading(text, self.heading_level)
            self.heading_level = 0
        elif self.row is not None:
            cell = " ".join(text.split())
            if cell:
                self.row.append(cell)
        else:
            self.out.add(text, kind="item" if self.tight_item else "paragraph")

    def heading_open(self, token: Token) -> None:
        self.heading_level = int(token.tag[1:])

    def paragraph_open(self, token: Token) -> None:
        # Paragraphs of tight lists are hidden: those items are one line each.
        self.tight_item = token.hidden

    def list_open(self, token: Token) -> None:
        self.list_depth += 1

    def list_close(self, token: Token) -> None:
        self.list_depth -= 1
        if not self.list_depth:
            self.out.end_run()

    def table_close(self, token: Token) -> None:
        self.out.end_run()

    def row_open(self, token: Token) -> None:
        self.row = []

    def row_close(self, token: Token) -> None:
        if self.row is not None:
            self.out.add(" | ".join(self.row), kind="row")
            self.row = None

    def code(self, token: Token) -> None:
        self.out.add(token.content, kind="code")

    def html(self, token: Token) -> None:
        HtmlTextExtractor(self.out).feed(token.content)


_STEPS: dict[str, Callable[[_Walk, Token], None]] = {
    "inline": _Walk.inline,
    "heading_open": _Walk.heading_open,
    "paragraph_open": _Walk.paragraph_open,
    "bullet_list_open": _Walk.list_open,
    "ordered_list_open": _Walk.list_open,
    "bullet_list_close": _Walk.list_close,
    "ordered_list_close": _Walk.list_close,
    "table_close": _Walk.table_close,
    "tr_open": _Walk.row_open,
    "tr_close": _Walk.row_close,
    "fence": _Walk.code,
    "code_block": _Walk.code,
    "html_block": _Walk.html,
}


def _inline_text(children: Sequence[Token]) -> str:
    """The text of inline tokens: markup dropped, image alt text kept, breaks as newlines."""
    parts: list[str] = []
    # An explicit stack instead of recursion: image alt text can itself contain images.
    stack: list[Iterator[Token]] = [iter(children)]
    while stack:
        for child in stack[-1]:
            kind = child.type
            if kind in _TEXT_TOKENS:
                parts.append(child.content)
            elif kind in ("softbreak", "hardbreak"):
                parts.append("\n")
            elif kind == "image" and child.children:
                stack.append(iter(child.children))
                break
        else:
            stack.pop()
    return "".join(parts)
