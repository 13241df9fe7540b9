"""The registry's cross-entry checks over an observation ``kvreg ingest-log`` has just written (kvreg/ingest.py):
the write is kept only when the registry stays valid with it, so validate never finds a half-accepted log."""

from __future__ import annotations

from pathlib import Path

from kvreg.ingest import IngestUsageError
from kvreg.logparse import LogError
from kvreg.problems import KvregError
from kvreg.registry import load_registry


def check_in_registry(root: Path | str, written: Path, previous: bytes | None, force: bool = False) -> list[str]:
    """The registry's cross-entry checks (kvreg/checks/*.sql) with the observation just written; on a problem
    they find in it (the same startup as an existing observation: 206 duplicate_observation; figures of the log that
    disagree: 208 observation_figures_disagree), the write is undone (the replaced file's bytes restored, or the new
    file removed) and the problem raised, so a log ingested twice under two ids never leaves a second copy for
    `validate` to blame on the curated one.

    Returns:
        [] when the registry is valid with the file; with ``force``, the messages of check 208 when they are the
        file's only problems (the file stays written: the caller records them in ``figures_disagree``).

    Raises:
        IngestUsageError: the observation repeats an existing one (with the command that refreshes that one).
        LogError: any other cross-entry problem located in the written file; figures that disagree list every
            disagreeing pair (both figures' entry and log lines) with the check's hint.
    """
    rel = written.relative_to(Path(root)).as_posix()   # as problems name files (write_observation: root/registry/…)
    try:
        load_registry(root)
        return []
    except KvregError as exc:
        # the written file is the problem's own or the one it names (related: the first copy of a duplicate)
        found = [p for p in exc.problems if rel in (p.file, p.related) or rel in (p.message or "")]
    if not found:
        return []   # problems elsewhere in the registry were there before this log (it loaded above)
    disagree = [p.message for p in found if p.code == "observation-figures-disagree"]
    if force and len(disagree) == len(found):
        return disagree
    if previous is None:
        written.unlink()
    else:
        written.write_bytes(previous)
    p = next((q for q in found if q.code == "duplicate-observation"), found[0])   # a second copy says the most
    if p.code == "duplicate-observation":
        # the problem sits on the later file by name and names the first in related: the other one is whichever
        # of the two is not the file just written
        other_file = p.related if p.file == rel else p.file
        other_id = Path(other_file).stem   # an observation's id is its file's stem (write_observation)
        raise IngestUsageError(f"this log's startup is already {other_file} (the same logged KV figures and "
                               f"settings): nothing written; to refresh that observation from this log run "
                               f"kvreg ingest-log LOG --id {other_id} --force")
    if disagree and len(disagree) == len(found):
        raise LogError(f"{rel}: observation-figures-disagree: " + "; ".join(disagree)
                       + f" (nothing written). Hint: {p.hint} — ingest-log --force keeps it")
    raise LogError(f"{rel}: {p.code}: {p.message} (nothing written)")
