"""Procurement reports: report definition → SQL queries → template context → HTML and PDF.

Modules: ``context`` (queries → dataclass), ``charts`` (matplotlib → inline SVG),
``chart_workers`` (the charts drawn in worker processes beside the queries),
``render`` (Jinja environment), ``pdf`` (WeasyPrint with a closed URL fetcher),
``make`` (the whole run, written atomically).  Queries live in ``queries/*.sql``.
"""
