"""Turn a diff side (a directory or a git revision) into a project directory on disk.

A git revision is materialized with ``git archive REV:<prefix>`` (the project's
path inside the repository) extracted into a temporary directory that is
removed afterwards.  Only the project files of that revision are read; the
kvreg code that builds and compares both sides is always the running one, so
a diff shows what the registry change moves, not what a code change moves.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path


class RevisionError(ValueError):
    """BASE or HEAD is neither a directory nor a git revision of the project (a usage error)."""


def _git(project: Path, *args: str, binary: bool = False):
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, check=False,
                          text=not binary, timeout=120)


def resolve_revision(project: Path, rev: str) -> str:
    """The full commit SHA of ``rev`` in the git repository holding ``project``.

    Raises:
        RevisionError: ``project`` is not in a git repository or ``rev`` names no commit.
    """
    if rev.startswith("-"):
        raise RevisionError(f"{rev!r} is not a git revision")
    try:
        out = _git(project, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except (OSError, subprocess.SubprocessError) as exc:
        raise RevisionError(f"cannot run git: {exc}") from exc
    if out.returncode != 0 or not out.stdout.strip():
        raise RevisionError(f"{rev!r} is neither a directory nor a git revision of {project}")
    return out.stdout.strip()


def _extract(project: Path, sha: str, into: Path) -> Path:
    prefix = _git(project, "rev-parse", "--show-prefix").stdout.strip().rstrip("/")
    top = Path(_git(project, "rev-parse", "--show-toplevel").stdout.strip())
    treeish = f"{sha}:{prefix}" if prefix else sha
    # From the top level: in a subfolder, git archive would also limit itself to the working directory.
    out = _git(top, "archive", "--format=tar", treeish, binary=True)
    if out.returncode != 0:
        raise RevisionError(f"git archive {treeish} failed: {out.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


FILL_CODE = "kvreg/configfill.py"
"""The module that fills a model entry's omitted geometry from its shipped config (issue 14 item 1)."""


def fills_geometry(spec: str | None, project: Path) -> bool:
    """Whether the registry of one diff side is read with the geometry fill (``load_registry(fill_geometry=)``).

    kvreg diffs a registry under the running code, but an entry's omitted key changed meaning when the fill
    came in (6a9d12c): before, ``granite-4.0-h-tiny`` left ``vocab_size`` out because it is unknown (its shipped
    config's 100352 is an inference, registry/models/CONFIGS.md), after, an omitted key is the shipped config's.
    Filling an older revision with today's rule would show a change nobody made (that model's vocabulary, and
    the figures it moves, against a revision from before the fill).  So a side is read unfilled when it is a revision (or a
    directory) of a repository that holds kvreg's own code (``kvreg/__init__.py`` at the top) without
    :data:`FILL_CODE`: the code the entries were written for did not fill them.  A project whose repository
    holds no kvreg code (a registry of its own) is always filled, as the running kvreg reads it.
    """
    if spec is None:
        return True
    if Path(spec).is_dir():
        root = Path(spec)
        return not (root / "kvreg" / "__init__.py").is_file() or (root / FILL_CODE).is_file()
    sha = resolve_revision(project, spec)
    top = Path(_git(project, "rev-parse", "--show-toplevel").stdout.strip())

    def has(path: str) -> bool:  # the path at the top of the repository, in that commit
        return _git(top, "cat-file", "-e", f"{sha}:{path}").returncode == 0

    return not has("kvreg/__init__.py") or has(FILL_CODE)


@contextlib.contextmanager
def materialize(spec: str | None, project: Path) -> Iterator[tuple[Path, str]]:
    """Yield ``(directory, label)`` for one side of a diff.

    Args:
        spec: a directory, a git revision (``origin/main``, ``HEAD~1``, a SHA),
            or None for the working tree of ``project``.
        project: the kvreg project directory (inside a git checkout for revisions).

    Raises:
        RevisionError: ``spec`` is neither (raised before anything is written).
    """
    if spec is None:
        yield project, "working tree"
        return
    if Path(spec).is_dir():
        yield Path(spec), spec
        return
    sha = resolve_revision(project, spec)
    with tempfile.TemporaryDirectory(prefix="kvreg-diff-") as tmp:
        yield _extract(project, sha, Path(tmp)), f"{spec} ({sha[:12]})"
