"""Jinja environment for reports: project templates first, then the shipped ones; strict and escaped.

``PROJECT/templates/`` overrides any shipped template of the same name (a
ChoiceLoader, as datasette does); an override may ``{% extends %}`` the
shipped one.  ``StrictUndefined`` turns a typo into an error instead of a
blank, autoescape escapes every value from the registry, and the number
formats are the filters of :mod:`kvreg.formats` so HTML and PDF agree.
"""

from __future__ import annotations

from pathlib import Path

MAIN_TEMPLATE = "report.html.j2"


_ENVIRONMENTS: dict = {}  # (project, has templates/) → Environment: the templates compiled once per process


def environment(project: Path | str | None = None):
    """The report ``jinja2.Environment`` (loader order: PROJECT/templates, then kvreg/templates).

    One environment per project and process (the HTML and the print HTML of one report share it, so each template
    is compiled once; Jinja re-reads a template whose file changed).  With a project whose ``.kvreg/`` folder (the
    database's, git-ignored) can be written, compiled templates are also kept there between runs
    (``jinja2.FileSystemBytecodeCache``: keyed on the template's file, checked against its source; the Q4 2026
    report's templates compile in ~0.18 s CPU, load in ~0.005 s, benchmarks/README.md).
    """
    import jinja2

    from kvreg.formats import FILTERS

    overrides = project is not None and (Path(project) / "templates").is_dir()
    key = (None if project is None else str(Path(project).resolve()), overrides)
    if key in _ENVIRONMENTS:
        return _ENVIRONMENTS[key]
    loaders = []
    if overrides:
        loaders.append(jinja2.FileSystemLoader(str(Path(project) / "templates")))
    loaders.append(jinja2.PackageLoader("kvreg", "templates"))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined,
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             bytecode_cache=_bytecode_cache(project))
    env.filters.update(FILTERS)
    _ENVIRONMENTS[key] = env
    return env


def _bytecode_cache(project: Path | str | None):
    """A ``jinja2.FileSystemBytecodeCache`` in PROJECT/.kvreg/jinja, or None when there is no project or the folder
    cannot be written (a read-only checkout: the templates are compiled in memory, as before)."""
    import jinja2

    from kvreg.folders import cache_folder

    folder = cache_folder(project, "jinja")
    return None if folder is None else jinja2.FileSystemBytecodeCache(str(folder))


def render_html(context, project: Path | str | None = None, *, for_print: bool = False) -> str:
    """Render the report context (:class:`kvreg.report.context.ReportContext`) to one HTML string.

    Chart SVGs are marked safe here: matplotlib escapes the text it writes into them.  In the print HTML each
    chart is an ``<img>`` of a ``data:`` URL instead (:func:`_print_chart`).
    ``for_print`` renders the PDF's HTML: the same templates, with the appendix grids at each model's shown
    precisions only (grid.sql ``printed``), since WeasyPrint's layout time grows with the table rows; the HTML
    file keeps every configuration in its collapsible sections.

    Raises:
        jinja2.UndefinedError: a template used a name the context does not have.
    """
    from markupsafe import Markup

    env = environment(project)
    chart = _print_chart if for_print else Markup
    charts = {m.model_id: {k: chart(v) for k, v in m.charts.items()} for m in context.models}
    summary_charts = {k: chart(v) for k, v in getattr(context, "summary_charts", {}).items()}
    return env.get_template(MAIN_TEMPLATE).render(ctx=context, charts=charts, summary_charts=summary_charts,
                                                  for_print=for_print)


def _print_chart(svg: str):
    """A chart SVG as ``<img class="chart" src="data:image/svg+xml;base64,…">`` for the PDF's HTML.

    WeasyPrint draws the same SVG either way (the Q4 2026 PDF is byte-identical), but an inline ``<svg>`` is first
    parsed by its pure-Python HTML parser and its ~400 nodes a chart go through the CSS cascade before being
    serialised back to an SVG image; a ``data:`` URL is parsed once by ElementTree: 15.1 → 14.1 s CPU for the
    Q4 2026 print HTML (benchmarks/README.md).  The fetcher serves ``data:`` URLs (:mod:`kvreg.report.pdf`).
    """
    import base64

    from markupsafe import Markup

    from kvreg.report.pdf import svg_for_weasyprint

    # sized as the stylesheet sizes an inline chart (figure svg), here so the HTML file's stylesheet stays as it is
    return Markup('<img class="chart" alt="chart" style="width: 100%; height: auto; display: block"'
                  ' src="data:image/svg+xml;base64,{}">').format(
        base64.b64encode(svg_for_weasyprint(svg).encode("utf-8")).decode("ascii"))
