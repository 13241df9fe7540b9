"""HTML → PDF with WeasyPrint, fetching nothing from outside the package.

The report HTML is self-contained (CSS and SVG inline), so the PDF renderer
needs no resources.  Its URL fetcher serves only ``data:`` URLs and the
package's own template files (``kvreg-asset:NAME``, read with importlib.resources)
and refuses everything else — ``file:``, ``http(s):`` and any other scheme —
without opening it, so a registry entry or a project template that references
``file:///etc/passwd`` or ``http://…`` makes WeasyPrint skip that resource.

The charts' SVG is rewritten into the form WeasyPrint draws fastest (:func:`svg_for_weasyprint`).
"""

from __future__ import annotations

import base64
import re
import urllib.parse
import xml.etree.ElementTree as ET
from importlib import resources

ASSET_SCHEME = "kvreg-asset:"


_SVG = "{http://www.w3.org/2000/svg}"
# matplotlib's SVG backend opens every figure with this default style (backend_svg.py ``_write_default_style``).
_MPL_DEFAULT_STYLE = "*{stroke-linejoin: round; stroke-linecap: butt}"
_MPL_DEFAULTS = (("stroke-linejoin", "round"), ("stroke-linecap", "butt"))


def svg_for_weasyprint(svg: str) -> str:
    """A matplotlib SVG with the same drawing, in the form WeasyPrint's SVG renderer draws fastest.

    WeasyPrint (70, ``weasyprint/svg/__init__.py`` ``Node.cascade``) parses every element's ``style`` attribute with
    tinycss2 and matches the SVG's own stylesheet against every element while drawing: for the Q4 2026 report's 31
    charts (~12,000 elements) that is about a fifth of their drawing time.  matplotlib writes each ``style`` as
    ``name: value; name: value`` (backend_svg.py ``_generate_css``) and one stylesheet, ``*{stroke-linejoin: round;
    stroke-linecap: butt}`` (``_write_default_style``).  Here every declaration becomes the presentation attribute
    of that name, the stylesheet is dropped and its two declarations written where inheritance would not give
    them (on the root's children, the children of ``<defs>`` and of an element that sets another value), so that every element
    gets what the cascade gave it (its style attribute over the ``*`` rule), and the ``<metadata>`` block, which is
    not drawn, is dropped.  WeasyPrint then reads the same value for every property of every element, so the drawing
    is the same: the Q4 2026 PDF, written uncompressed with whole fonts, is byte-identical, and drawing its 31 charts
    takes 3.0–3.25 → 2.45–2.6 s CPU (benchmarks/README.md); tests/test_report_pdf_svg.py compares a chart's PDF byte
    for byte.

    Two more steps draw nothing less (``Node`` and ``SVG.draw_node`` of WeasyPrint 70 still resolve every node's font
    size, transform, opacity, filter and clip before finding nothing to draw): groups without children are dropped,
    innermost first (matplotlib writes one for every tick mark, ``line2d_N``, and the report's charts have no tick
    marks: ``charts.RC``; a minor tick without a label leaves its ``xtick_N`` empty too), and a ``transform`` that is
    a rotation by 0 (matplotlib writes ``rotate(-0 x y)`` on every horizontal text) is dropped, which removes only an
    identity ``1 0 0 1 0 0 cm`` from the PDF.  The Q4 2026 report's 31 charts: 596 of their 7,643 elements and 994
    rotations dropped, drawn in ~17 % less CPU (benchmarks/README.md, pdf11).

    Args:
        svg: the SVG document as text.

    Returns:
        The rewritten SVG text; ``svg`` itself, unchanged, when it is not in the shape described (another
        stylesheet, a declaration that is not ``name: value``, ``!important``, or not well-formed XML), so that
        an SVG this function does not understand is drawn as it is.
    """
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return svg
    styles = [el for el in root.iter(f"{_SVG}style")]
    if len(styles) > 1 or (styles and (styles[0].text or "").strip() != _MPL_DEFAULT_STYLE):
        return svg
    parents = {child: parent for parent in root.iter() for child in parent}
    for el in styles:
        parents[el].remove(el)
    for el in [el for el in root if el.tag == f"{_SVG}metadata"]:
        root.remove(el)
    for el in root.iter():
        declared = el.attrib.pop("style", None)
        if declared:
            for declaration in declared.split(";"):
                name, colon, value = declaration.partition(":")
                name, value = name.strip(), value.strip()
                if not colon or not name or "!" in value:
                    return svg
                el.set(name, value)
    if styles:
        # the * rule gave every element but the root (WeasyPrint cascades children only) the default wherever its
        # own style did not set the property; by inheritance an element without its own value takes its parent's,
        # which is the default unless the parent set another: the default is written there, under the root, and in
        # <defs> (a <use> draws its target as its own child, inheriting from the <use>, weasyprint/svg/defs.py)
        for parent in root.iter():
            for child in parent:
                for name, value in _MPL_DEFAULTS:
                    if name not in child.attrib and (parent is root or parent.tag == f"{_SVG}defs"
                                                     or parent.get(name, value) != value):
                        child.set(name, value)
    _drop_empty_groups(root)
    for el in root.iter():
        if _ROTATE_BY_ZERO.fullmatch(el.get("transform", "")):
            del el.attrib["transform"]
    # prefixed names (ns0:svg, ns1:href) are the same XML names to WeasyPrint's ElementTree; ET.register_namespace
    # would give the usual prefixes but changes a process-wide table
    return ET.tostring(root, encoding="unicode")


# matplotlib's backend_svg writes every text's angle as ``rotate(-angle x y)`` (``draw_text``, "rotate(%s %s %s)"):
# at angle 0 the rotation about (x, y) is the identity
_ROTATE_BY_ZERO = re.compile(r"\s*rotate\(\s*-?0(\.0*)?(\s*[ ,]\s*[-+0-9.eE]+){2}\s*\)\s*")


def _drop_empty_groups(parent: ET.Element) -> bool:
    """Remove every ``<g>`` under ``parent`` that has no children once its own empty groups are removed (a group
    draws nothing but its children; matplotlib writes no text directly in a ``<g>``).  True when ``parent`` is left
    without children."""
    for child in list(parent):
        if _drop_empty_groups(child) and child.tag == f"{_SVG}g" and not (child.text or "").strip():
            parent.remove(child)
    return len(parent) == 0


class RefusedURL(ValueError):
    """A URL the report's fetcher will not open."""


def fetch_asset(url: str) -> tuple[bytes, str]:
    """``(body, mime type)`` for an allowed URL: ``data:`` or ``kvreg-asset:NAME``.

    Raises:
        RefusedURL: any other scheme, or an asset name outside kvreg/templates.
    """
    if url.startswith("data:"):
        head, _, payload = url[5:].partition(",")
        mime = head.split(";")[0] or "text/plain"
        body = base64.b64decode(payload) if head.endswith(";base64") else urllib.parse.unquote_to_bytes(payload)
        return body, mime
    if url.startswith(ASSET_SCHEME):
        name = url[len(ASSET_SCHEME):]
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise RefusedURL(f"not a template asset name: {url}")
        f = resources.files("kvreg").joinpath("templates", name)
        if not f.is_file():
            raise RefusedURL(f"no such template asset: {url}")
        mime = "text/css" if name.endswith(".css") else "image/svg+xml" if name.endswith(".svg") else "application/octet-stream"
        return f.read_bytes(), mime
    raise RefusedURL(f"the report renderer fetches nothing outside the package: {url}")


def _fetcher(refused: list[str] | None):
    import weasyprint.urls as wu

    def note(url):
        if refused is not None:
            refused.append(url)

    if hasattr(wu, "URLFetcher"):  # WeasyPrint ≥ 68: a URLFetcher subclass
        class AssetFetcher(wu.URLFetcher):
            def fetch(self, url, headers=None):
                try:
                    body, mime = fetch_asset(url)
                except RefusedURL:
                    note(url)
                    raise
                return wu.URLFetcherResponse(url, body, {"Content-Type": mime})

        return AssetFetcher()

    def fetcher(url, timeout=10, ssl_context=None):  # older WeasyPrint: a function returning a dict
        try:
            body, mime = fetch_asset(url)
        except RefusedURL:
            note(url)
            raise
        return {"string": body, "mime_type": mime, "redirected_url": url}

    return fetcher


def html_to_pdf(html: str, refused: list[str] | None = None) -> bytes:
    """Render report HTML to PDF bytes.

    Args:
        html: the report HTML (self-contained).
        refused: when given, every URL the fetcher refused is appended (for tests and logs).

    Returns:
        The PDF file's bytes.
    """
    import logging

    import weasyprint

    # WeasyPrint logs each refused resource as a warning; the caller gets them in ``refused``.
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    # base_url is a non-fetchable scheme so relative references resolve to URLs the fetcher refuses.
    doc = weasyprint.HTML(string=html, base_url=ASSET_SCHEME, url_fetcher=_fetcher(refused))
    return doc.write_pdf()
