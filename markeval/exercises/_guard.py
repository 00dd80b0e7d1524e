"""Run an answer with only the modules its question allows: the guard behind "from scratch".

A question that asks for BLEU from its definition must not accept an answer that calls
``markeval.bleu``, ``sacrebleu.corpus_bleu`` or ``nltk.ngrams`` — however the answer reaches it:
an alias, ``getattr(__import__("sacre" + "bleu"), ...)`` at run time, ``importlib``, ``exec`` of
a string, or a helper module written to disk and imported. Reading names in the answer's
bytecode cannot see the run-time routes, so :func:`guard` watches the answer while it runs:

* a **profile hook** (``sys.setprofile``, this thread) sees every Python function that runs and
  every built-in the answer's own code calls. A Python frame counts as the answer's when it
  runs in the answer's namespace (the notebook's globals) or in code compiled from a string;
  otherwise it belongs to the module named by its globals, and that module must be allowed:
  the standard library (its files under the interpreter's library folder, or frozen) or one
  of the question's ``allowed`` packages (files under that package's folder). A library
  function reached by any route runs in a frame of its own module, so it is seen;
* the modules of :data:`SYSTEM` (the interpreter, processes, threads, the garbage collector,
  frames) are part of the standard library but not of an answer: a call *from the answer's
  code* into one of them is refused too (the standard library itself may use them);
* an **audit hook** (``sys.addaudithook``, installed once, idle outside a guard) refuses the
  answer's own imports of modules that are not allowed, naming them even when they have no
  Python code.

The first module that is not allowed is recorded, the answer is stopped with
:class:`ForbiddenModule`, and the record — not the exception, which an answer could catch —
decides the verdict. While a module rule is on, output goes to a buffer (so that ``print`` in
an answer does not run the notebook kernel's own output code), the garbage collector is paused
(so that no finaliser of another library runs inside the answer) and, where a time limit is
given, a timer stops the answer with :class:`AnswerTimeout`.

This is a rule for honest grading, not a sandbox against an attacker who sets out to break the
interpreter: code that rewrites the guard's state in memory, or that ``exec``s a copy of a
library's source obtained before the guard started, is not detected. The batch grader
(:mod:`markeval.exercises.grade`) adds what a process boundary can: the answer runs in a
process of its own, and its outputs are compared with the references elsewhere.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import sys
import sysconfig
import threading
from dataclasses import dataclass

__all__ = ["SYSTEM", "AnswerTimeout", "ForbiddenModule", "Record", "allowed_text", "guard"]

#: Standard-library modules an answer may not call itself: they reach the interpreter, the
#: operating system, processes and threads rather than compute anything.
SYSTEM = frozenset({
    "os", "posix", "nt", "sys", "gc", "inspect", "ctypes", "_ctypes", "subprocess",
    "_posixsubprocess", "signal", "_signal", "threading", "_thread", "multiprocessing",
    "_multiprocessing", "concurrent", "socket", "_socket", "asyncio", "faulthandler",
    "tracemalloc", "pty", "resource", "shutil",
})
_STDLIB_DIRS = tuple({os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep,
                      os.path.realpath(os.path.dirname(os.__file__)) + os.sep})
_STDLIB_NAMES = frozenset(sys.stdlib_module_names) | {"builtins", "__future__"}


class ForbiddenModule(Exception):
    """Raised inside an answer that reached a module its question does not allow."""

    def __init__(self, module: str):
        super().__init__(f"uses module {module!r}, which this question does not allow")
        self.module = module


class AnswerTimeout(BaseException):
    """Raised inside an answer that ran past its time limit (a BaseException, so that a bare
    ``except Exception`` in the answer does not swallow it)."""


@dataclass
class Record:
    """What a guarded run saw: the first module that was not allowed, whether the time ran
    out, and what the answer printed (``stdout``, ``stderr``)."""

    forbidden: str | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""


def allowed_text(allowed) -> str:
    """How the allowed modules read in a message.

    Examples
    --------
    >>> allowed_text(("numpy",)), allowed_text(("numpy", "scipy")), allowed_text(())
    ('the standard library and numpy', 'the standard library, numpy and scipy', \
'the standard library')
    """
    names = ["the standard library", *allowed]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _root(name) -> str:
    return str(name or "").partition(".")[0]


def _package_dirs(allowed) -> dict[str, tuple[str, ...]]:
    dirs = {}
    for name in allowed:
        module = sys.modules.get(name)
        if module is None:
            import importlib

            module = importlib.import_module(name)
        paths = list(getattr(module, "__path__", [])) or [os.path.dirname(module.__file__)]
        dirs[name] = tuple(os.path.realpath(p) + os.sep for p in paths)
    return dirs


class _Rules:
    """Which frames and built-ins are allowed, for one guarded run."""

    def __init__(self, namespace: dict, allowed, entry=None):
        self.namespace = namespace
        self.entry = entry  # the frame that runs the guarded block: the caller's own code
        self.dirs = _package_dirs(allowed)
        self.allowed = frozenset(allowed)
        # The import system's own finders and path hooks (setuptools' shims, editable
        # installs, pytest's rewriter) run inside any import, an allowed one included.
        hooks = [*map(type, sys.meta_path), *sys.path_hooks]
        self.finders = frozenset(_root(getattr(h, "__module__", None)) for h in hooks) - {
            "markeval", ""}
        self._files: dict[str, bool] = {}

    def is_answer(self, frame) -> bool:
        """Whether ``frame`` runs the answer's code: in its namespace, or code compiled from a
        string by the answer (``exec`` by a library is the library's)."""
        while frame is not None and _dynamic(frame):
            if frame.f_globals is self.namespace:
                return True
            frame = frame.f_back
        return frame is not None and frame.f_globals is self.namespace

    def module_of(self, frame) -> str | None:
        """The frame's module when it is not allowed; None when it is."""
        name = frame.f_globals.get("__name__")
        root, filename = _root(name), frame.f_code.co_filename
        key = f"{root}\0{filename}"
        if key not in self._files:
            if root in self.finders or _dynamic(frame):
                ok = True
            elif filename.startswith("<frozen "):
                ok = root in _STDLIB_NAMES
            else:
                path = os.path.realpath(filename)
                ok = ((root in _STDLIB_NAMES and path.startswith(_STDLIB_DIRS))
                      or (root in self.dirs and path.startswith(self.dirs[root])))
            self._files[key] = ok
        return None if self._files[key] else (name or filename)

    def violation(self, frame) -> str | None:
        """The module of ``frame`` when the answer brought it in; None when it is allowed.

        A module that is not allowed may still run for an allowed one: an allowed package's
        own import of a dependency (NumPy's ``f2py`` imports charset_normalizer), code that
        an import finder calls, or the guarded block's own code around the answer. Walking
        back from the frame, the first of these decides: the answer's frame (a violation), an
        import made by code other than the answer's, or the block itself."""
        module = self.module_of(frame)
        caller = frame.f_back
        while module is not None and caller is not None:
            if self.is_answer(caller) or caller.f_globals is _OWN:
                return module
            if caller is self.entry:  # called by the guarded block itself, not the answer
                return None
            if caller.f_code.co_filename.startswith("<frozen importlib"):
                importer = _importer(caller, skip_stdlib=True)
                return module if importer is None or self.is_answer(importer) else None
            if _root(caller.f_globals.get("__name__")) in self.finders:
                return None
            caller = caller.f_back
        return module

    def builtin_module(self, function) -> str | None:
        """The module of a built-in the answer called, when the answer may not call it."""
        module = getattr(function, "__module__", None)
        owner = getattr(function, "__self__", None)
        if module is None and isinstance(owner, type(sys)):
            module = owner.__name__
        root = _root(module)
        if not root or root in self.allowed:
            return None
        return module if root in SYSTEM or root not in _STDLIB_NAMES else None


_OWN = globals()  # this module's frames (the guard resuming) are the guard's, not the answer's


class _State:
    """The guard of the current thread, read by the process-wide audit hook."""

    local = threading.local()
    installed = False


def _dynamic(frame) -> bool:
    """Whether ``frame`` runs code compiled from a string (``exec``, ``eval``)."""
    filename = frame.f_code.co_filename
    return filename.startswith("<") and not filename.startswith("<frozen ")


def _importer(frame, *, skip_stdlib: bool = False):
    """The frame that asked for an import: the first outside the import machinery (and, with
    ``skip_stdlib``, outside the standard library and code compiled from strings, so that
    ``importlib.import_module`` and ``exec("import x")`` name who called them)."""
    while frame is not None and (
            frame.f_globals is _OWN or frame.f_code.co_filename.startswith("<frozen importlib")
            or (skip_stdlib and (_dynamic(frame) or os.path.realpath(
                frame.f_code.co_filename).startswith(_STDLIB_DIRS)))):
        frame = frame.f_back
    return frame


def _audit(event: str, args) -> None:
    rules = getattr(_State.local, "rules", None)
    if rules is None or event != "import":
        return
    root = _root(args[0])
    # Only the answer's own imports: a library may try an optional import of its own (and
    # whatever code it then runs is seen by the profile hook).
    importer = _importer(sys._getframe())
    if importer is None or not rules.is_answer(importer):
        return
    if root and root not in _STDLIB_NAMES and root not in rules.allowed:
        record = _State.local.record
        record.forbidden = record.forbidden or str(args[0])
        raise ForbiddenModule(str(args[0]))


@contextlib.contextmanager
def guard(namespace: dict, allowed=None, *, time_limit: float | None = None):
    """Watch the code run inside the ``with`` block; yield its :class:`Record`.

    Parameters
    ----------
    namespace : dict
        The answer's globals (``answer.__globals__``): frames that run there are the answer's.
    allowed : sequence of str or None
        Packages beside the standard library that the answer may use (``("numpy",)``); None
        for no rule on modules (only the time limit and the output buffer).
    time_limit : float, optional
        Seconds; past them the answer is stopped with :class:`AnswerTimeout` (main thread).

    Examples
    --------
    >>> def mine(words):
    ...     return len(words)
    >>> with guard(globals(), ("numpy",)) as record:
    ...     n = mine(["a", "b"])
    >>> n, record.forbidden
    (2, None)
    >>> def cheat(xs):
    ...     import markeval
    ...     return markeval.text.ngrams(xs, 1)
    >>> with guard(globals(), ("numpy",)) as record:
    ...     try:
    ...         cheat(["a"])
    ...     except ForbiddenModule:
    ...         pass  # an answer may catch the exception: the record still holds
    >>> record.forbidden
    'markeval.text'
    """
    # sys._getframe(2): past contextlib's __enter__, the frame that runs the ``with`` block.
    rules = None if allowed is None else _Rules(namespace, tuple(allowed), sys._getframe(2))
    record = Record()
    if not _State.installed:
        sys.addaudithook(_audit)
        _State.installed = True

    def stop(module: str):
        record.forbidden = record.forbidden or module
        raise ForbiddenModule(module)

    def profile(frame, event, arg):
        if frame.f_globals is _OWN:  # the guard itself, resuming at the end of the block
            return
        if event == "call":
            if rules.is_answer(frame):
                return
            module = rules.violation(frame)
            if module is not None:
                stop(module)
            caller = frame.f_back
            if (caller is not None and rules.is_answer(caller)
                    and _root(frame.f_globals.get("__name__")) in SYSTEM):
                stop(frame.f_globals["__name__"])
        elif event == "c_call" and rules.is_answer(frame):
            module = rules.builtin_module(arg)
            if module is not None:
                stop(module)

    timer = time_limit is not None and threading.current_thread() is threading.main_thread()
    if timer:
        def expire(signum, frame):
            record.timed_out = True
            raise AnswerTimeout(f"no result within {time_limit:g} s")

        previous = signal.signal(signal.SIGALRM, expire)
        # Repeating: an answer that swallows the first stop meets the next one.
        signal.setitimer(signal.ITIMER_REAL, float(time_limit), 0.5)
    collecting = gc.isenabled()
    gc.disable()
    _State.local.rules, _State.local.record = rules, record
    # Under a module rule, output goes to buffers: the kernel's own output code is not the
    # answer's. Without one it flows as usual (progress bars stay widgets in a notebook).
    out, err = (io.StringIO(), io.StringIO()) if rules is not None else (sys.stdout, sys.stderr)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.setprofile(profile if rules is not None else None)
            try:
                yield record
            finally:
                sys.setprofile(None)
    finally:
        _State.local.rules = _State.local.record = None
        if collecting:
            gc.enable()
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if rules is not None:
            record.stdout, record.stderr = out.getvalue(), err.getvalue()
