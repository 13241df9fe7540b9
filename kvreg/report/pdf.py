"""HTML → PDF with WeasyPrint, fetching nothing from outside the package.

The report HTML is self-contained (CSS and SVG inline), so the PDF renderer
needs no resources.  Its URL fetcher serves only ``data:`` URLs and the
package's own template files (``kvreg-asset:NAME``, read with importlib.resources)
and refuses everything else — ``file:``, ``http(s):`` and any other scheme —
without opening it, so a registry entry or a project template that references
``file:///etc/passwd`` or ``http://…`` makes WeasyPrint skip that resource.
"""

from __future__ import annotations

import base64
import urllib.parse
from importlib import resources

ASSET_SCHEME = "kvreg-asset:"


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
