"""Every error the project raises, under one base: catch :class:`AgentClinicError` for
anything pytest-agentclinic refused, or one family for one kind of trouble.

The families (the leaves stay beside the code that raises them, built on these):

* :class:`InputError`: a file or value given to the project cannot be read as it must (a
  case file, a run's records, a models file, a cache...); it names the file, the line and
  the field where it knows them. The ``agentclinic`` command prints it as one line and
  exits 2.
* :class:`RunDirectoryError`: the run directory cannot be used (held by a live run, not
  writable, holding no run).
* :class:`ExtensionError`: an installed extension cannot be loaded or is not what its
  entry-point group needs.
* ``LLMError`` (:mod:`pytest_agentclinic.llm.errors`): a model call failed; never a wrong
  diagnosis and never cached.

Input and extension errors are ``ValueError`` too, as the readers' callers have long caught
them as such.
"""

from __future__ import annotations

from pathlib import Path


class AgentClinicError(Exception):
    """Base of every error pytest-agentclinic raises."""


class InputError(AgentClinicError, ValueError):
    """Bad input: ``str()`` is one line naming the file, line and field (those known).

    ``InputError("message")`` alone is the plain message; with ``path`` (and ``line``,
    ``field``) it reads ``path:line: field 'name': message``.
    """

    #: Where the input is bad (class defaults: a subclass built by another library's
    #: ``__init__``, e.g. a YAML loader's, has no location).
    path: str | None = None
    line: int | None = None
    field: str | None = None

    def __init__(self, message: str = "", *, path: str | Path | None = None,
                 line: int | None = None, field: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line, self.field, self.message = line, field, message
        super().__init__(self.located())

    def located(self) -> str:
        """The message with its location in front."""
        where = "" if self.path is None else (
            f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: ")
        what = "" if self.field is None else f"field {self.field!r}: "
        return f"{where}{what}{self.message}"


class RunDirectoryError(AgentClinicError):
    """A run directory cannot be used: held by a live run, not writable, or no run."""


class ExtensionError(AgentClinicError, ValueError):
    """An installed extension's entry point could not be loaded or is not what its group
    needs; the message names the entry point and its distribution."""
