"""A report's summary (model-written Markdown, untrusted) as sanitised HTML.

Two layers, each enough alone for what it guards:

1. markdown-it-py in CommonMark mode with raw HTML **off**: ``<script>``,
   ``<img onerror=…>`` and any other tag written in the summary come out as
   text. Links keep only http(s) and mailto targets (markdown-it refuses
   ``javascript:`` and ``data:``), and each gets ``class="external"``,
   ``target="_blank"`` and ``rel="nofollow noopener noreferrer"``. Images
   are never loaded: each becomes a marked link to its URL. Citations of
   evidence (``[Q1]``, ``[C2]``) become links to the evidence on the page.
2. nh3 (ammonia) over the result: an allow-list of tags and attributes, no
   event handlers, no ``style``, URL schemes http, https and mailto only,
   ``rel`` forced on every link, ``<script>``/``<style>`` removed with their
   content. Whatever the first layer lets through, this one strips.

Offline (``links=False``, the static HTML report of ``lookout show --html``):
no outside address is linked at all: a link is its text followed by its
address as text, an image its alt text and address; only the citations,
links inside the page, stay links.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

LINK_REL = "nofollow noopener noreferrer"
_CITE = re.compile(r"\[([CQ]\d{1,4})\]")
_TAGS = {
    "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a", "span",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def _external(url: str) -> bool:
    return url.startswith(("http://", "https://", "mailto:"))


def _link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    offline = env.get("offline", False)
    env.setdefault("links", []).append(href if offline and not href.startswith("#") else None)
    if offline and not href.startswith("#"):
        return "<span>"
    if _external(href):
        token.attrSet("class", "external")
        token.attrSet("target", "_blank")
        token.attrSet("rel", LINK_REL)
    return self.renderToken(tokens, idx, options, env)


def _link_close(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """Offline, a link's address follows its text, as text; else the link closes."""
    opened = env.get("links") or [None]
    href = opened.pop()
    if href is not None:
        return f"</span> ({_escape(href)})"
    return self.renderToken(tokens, idx, options, env)


def _image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image is never loaded: show it as a link to its URL, labelled with its alt text."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    label = f"image: {alt}"
    if env.get("offline", False):
        return f"[{_escape(label)}] ({_escape(src)})" if src else f"[{_escape(label)}]"
    if not _external(src):
        return f"[{_escape(label)}]"
    return (
        f'<a href="{_escape(src)}" class="external" target="_blank" rel="{LINK_REL}">'
        f"[{_escape(label)}]</a>"
    )


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _cite_tokens(text: str) -> list[Token]:
    """Split one text token's content into text and citation links."""
    out: list[Token] = []
    last = 0
    for match in _CITE.finditer(text):
        if match.start() > last:
            out.append(_text(text[last : match.start()]))
        link = Token("link_open", "a", 1)
        link.attrs = {"href": f"#evidence-{match.group(1)}", "class": "cite"}
        out += [link, _text(match.group(0)), Token("link_close", "a", -1)]
        last = match.end()
    if last < len(text):
        out.append(_text(text[last:]))
    return out


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _citations(state: StateCore) -> None:
    """Core rule: ``[Q1]`` / ``[C1]`` in text (not in links or code) links to that evidence."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        depth = 0
        for token in block.children:
            depth += {"link_open": 1, "link_close": -1}.get(token.type, 0)
            if token.type == "text" and depth == 0 and _CITE.search(token.content):
                children.extend(_cite_tokens(token.content))
            else:
                children.append(token)
        block.children = children


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.core.ruler.push("lookout_citations", _citations)
    return md


_MD = _parser()


def _keep_target(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "class":
        return value if value in ("external", "cite") else None
    if attribute == "target":
        return "_blank" if value == "_blank" else None
    return value


def render_summary(markdown: str, *, links: bool = True) -> str:
    """Return the summary as HTML that is safe to insert into the page as is.

    ``links=False``: offline, no outside address linked (see the module).
    """
    return _sanitised(_MD.render(markdown, {"offline": not links}))


def render_inline(markdown: str, *, links: bool = True) -> str:
    """One line of Markdown (a check's result, its values in code spans) as safe HTML, no ``<p>``.

    The same parser and the same sanitising as ``render_summary``; ``links=False``
    as there.
    """
    return _sanitised(_MD.renderInline(markdown, {"offline": not links}))


def _sanitised(html: str) -> str:
    """``html`` through nh3's allow-list (the module's second layer)."""
    attributes: dict[str, set[str]] = {k: set(v) for k, v in _ATTRIBUTES.items()}
    attributes["a"] |= {"class", "target"}
    cleaned: Any = nh3.clean(
        html,
        tags=_TAGS,
        clean_content_tags={"script", "style"},
        attributes=attributes,
        attribute_filter=_keep_target,
        url_schemes={"http", "https", "mailto"},
        link_rel=LINK_REL,
        strip_comments=True,
    )
    return str(cleaned)
