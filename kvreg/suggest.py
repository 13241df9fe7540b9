"""``did you mean``: the registry ids a mistyped id most likely meant.

Users type ``h100`` for ``h100-sxm-80gb``, ``H100-SXM-80GB`` or ``Llama-3.1-8B`` for the
lower-case id, or a near spelling (``lama-3.1-8b``).  The candidates, in this order: the id
equal to the input ignoring case, ids that start with it (ignoring case; ``h100`` →
``h100-nvl-94gb``, ``h100-pcie-80gb``, ``h100-sxm-80gb``), ids it starts with (``h200-sxm-141gb`` →
``h200``), ids containing it, then
:func:`difflib.get_close_matches` on the lower-cased ids.
"""

from __future__ import annotations

import difflib


def near_ids(value: str, known: list[str], n: int = 3) -> list[str]:
    """Up to ``n`` ids of ``known`` that ``value`` most likely meant (empty when none is close).

    Args:
        value: what the user typed.
        known: the valid ids.
        n: most suggestions returned (prefix matches beyond ``n`` are cut, shortest first).
    """
    v = value.strip().lower()
    if not v:
        return []
    lower = {k.lower(): k for k in known}
    out: list[str] = []

    def add(ids):
        for k in ids:
            if k not in out:
                out.append(k)

    add([lower[v]] if v in lower else [])
    add(sorted((k for k in known if k.lower().startswith(v)), key=lambda k: (len(k), k)))
    # an id the typed name starts with, followed by an id's word separator "-": ``h200-sxm-141gb`` (a spelled-out
    # SKU) → ``h200``, longest first (difflib ranks h100-sxm-80gb above it on shared letters).  Only "-": in
    # ``ampere_gddr`` the "_" is the typo, and difflib's ``ampere-gddr`` is meant, not ``ampere``
    add(sorted((k for k in known if len(k) >= 3 and v.startswith(k.lower() + "-")), key=lambda k: (-len(k), k)))
    if len(v) >= 3:
        add(sorted((k for k in known if v in k.lower()), key=lambda k: (len(k), k)))
    add(lower[m] for m in difflib.get_close_matches(v, list(lower), n=n))
    return out[:n]
