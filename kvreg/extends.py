"""``extends:`` for engine entries: a release written as its parent plus the rules that changed.

An engine file may say ``extends: vllm-0.19`` (another engine id).  Before validation its data
becomes the parent's (itself resolved first) deep-merged with its own:

* mappings merge key by key, the child's value winning; scalars and plain lists are replaced;
* lists of mappings that all carry an ``id`` (``sources``, ``accounting.quirks``) merge by id:
  a child item replaces the parent item of the same id, new ids are appended, and an item
  ``{id: X, remove: true}`` drops the parent's X;
* ``id``, ``name`` and ``releases`` are never inherited (each release names itself).

Problems are located in the child: an unknown parent (``unknown-parent``) and a chain that
comes back to itself (``extends-cycle``) at the ``extends`` key; keys inherited from the parent
point at that key too (the parent's own file reports its own problems).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from kvreg.problems import Problem
from kvreg.yamlsrc import Document, load_document

NOT_INHERITED = ("id", "name", "releases", "extends")


def _merge(parent, child):
    """``child`` over ``parent`` by the rules in the module docstring."""
    if isinstance(parent, dict) and isinstance(child, dict):
        out = dict(parent)
        for k, v in child.items():
            out[k] = _merge(parent[k], v) if k in parent else v
        return out
    if (isinstance(parent, list) and isinstance(child, list) and child
            and all(isinstance(x, dict) and "id" in x for x in parent + child)):
        out = {x["id"]: x for x in parent}
        for x in child:
            if x.get("remove") is True:
                out.pop(x["id"], None)
            else:
                out[x["id"]] = _merge(out[x["id"]], x) if x["id"] in out else x
        return list(out.values())
    return child


class EngineParents:
    """Resolves ``extends`` chains of the engine files of one project, caching parsed parents."""

    def __init__(self, root: Path, folder: str):
        self.root, self.folder = root, folder
        self._docs: dict[str, Document | None] = {}

    def _doc(self, eid: str) -> Document | None:
        if eid not in self._docs:
            paths = sorted((self.root / self.folder).glob(f"{eid}.y*ml"))
            if not paths:
                self._docs[eid] = None
            else:
                display = paths[0].relative_to(self.root).as_posix()
                self._docs[eid] = load_document(paths[0], display)[0]
        return self._docs[eid]

    def _known(self) -> list[str]:
        return sorted(p.stem for p in (self.root / self.folder).glob("*.y*ml"))

    def resolve(self, doc: Document, stem: str) -> tuple[Document | None, list[Problem]]:
        """``doc`` with its parents merged in, or (None, problems) when the chain is broken."""
        if not isinstance(doc.data, dict) or "extends" not in doc.data:
            return doc, []
        data, chain = self._resolved_data(doc, [stem])
        if isinstance(data, Problem):
            return None, [data]
        line_col = doc.where(("extends",))
        positions = {p: line_col for p in _paths(data)}
        positions.update(doc.positions)
        return Document(doc.file, data, positions), []

    def _resolved_data(self, doc: Document, chain: list[str]):
        parent = doc.data.get("extends")
        line, col = doc.where(("extends",))
        if not isinstance(parent, str):
            return Problem(doc.file, line, col, "extends", "wrong-type",
                           f"extends must name one engine id (got {parent!r})", "e.g. extends: vllm-0.9-0.16"), chain
        if parent in chain:
            cycle = " → ".join(chain + [parent])
            return Problem(doc.file, line, col, "extends", "extends-cycle", f"extends comes back to itself: {cycle}",
                           "a release extends an older one; remove one link of the chain"), chain
        pdoc = self._doc(parent)
        if pdoc is None or not isinstance(pdoc.data, dict):
            if parent in self._known():  # the parent's own file reports why it does not parse
                return Problem(doc.file, line, col, "extends", "unknown-parent",
                               f"parent engine {parent!r} could not be read", f"fix {self.folder}/{parent}.yaml first"), chain
            near = difflib.get_close_matches(parent, self._known(), n=1, cutoff=0.6)
            return Problem(doc.file, line, col, "extends", "unknown-parent",
                           f"extends names engine {parent!r}, which is not in {self.folder}/",
                           (f"did you mean {near[0]!r}? " if near else "")
                           + f"known engines: {', '.join(self._known())}"), chain
        pdata = pdoc.data
        if "extends" in pdata:
            pdata, chain = self._resolved_data(pdoc, chain + [parent])
            if isinstance(pdata, Problem):
                # a broken link further up is reported at this file's extends, naming the chain
                return Problem(doc.file, line, col, "extends", pdata.code, pdata.message, pdata.hint), chain
        inherited = {k: v for k, v in pdata.items() if k not in NOT_INHERITED}
        return _merge(inherited, doc.data), chain


def _paths(data, prefix=()):
    """Every key path of a nested mapping/list (for positions of inherited keys)."""
    yield prefix
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, prefix + (i,))
