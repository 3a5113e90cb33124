"""JAX's ``jax.debug.breakpoint``: an interactive debugger at a point of a program, with the
values the program has there, also inside `jit` (each time the compiled program runs, not
while it is traced), `vmap` (once per example) and `grad` (the primal values).

When called, `breakpoint` snapshots the Python frames above it (their locals, source and
line). Every traced leaf of those locals becomes an argument of one `funcgrad.debug.callback`
(the mechanism `funcgrad.debug.print` uses); the rest is kept as it is. When the callback
runs, with the runtime values, the frames are rebuilt with those values in place of the
tracers and handed to the debugger backend: by default JAX's text debugger, pdb's commands
on the snapshot (``p x``, ``pp x``, an expression, ``u``/``d``, ``l``, ``w``/``bt``, ``c``,
``q``), prompt ``(jdb)``. A snapshot, not a live frame: pdb's stepping does not apply, as in
JAX. Other backends: `register_debugger`.
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback
from typing import IO, Any, Callable

from funcgrad import tree_util
from funcgrad.core import Tracer
from funcgrad.debug._callback import callback
from funcgrad.transforms.jit_explain import internal

__all__ = ["breakpoint", "DebuggerFrame", "CliDebugger", "register_debugger",
           "get_debugger"]


class _CantFlatten:
    """In place of a local whose value is no pytree funcgrad can flatten."""

    def __repr__(self) -> str:
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame as the debugger shows it (JAX's fields)."""
    filename: str
    locals: dict
    globals: dict
    code_context: Any
    source: list
    lineno: int
    offset: int | None

    @classmethod
    def from_frameinfo(cls, info: inspect.FrameInfo) -> "DebuggerFrame":
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = [line.rstrip("\n") for line in lines]
            offset = info.lineno - max(start, 1)
            if offset >= len(source):  # (code run by eval has no matching source)
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)


def _flatten_locals(frames: list) -> tuple[list, Callable[[list], list]]:
    """(the traced leaves of the frames' locals, a function rebuilding the frames with
    values in their place)."""
    plan, traced = [], []
    for frame in frames:
        entries = []  # (name, the value, or None and (treedef, leaves, traced mask))
        for name, value in frame.locals.items():
            try:
                leaves, tree = tree_util.tree_flatten(value)
            except Exception:  # any error of a user's flatten rule: show it unflattened
                entries.append((name, cant_flatten, None))
                continue
            mask = [isinstance(leaf, Tracer) for leaf in leaves]
            traced.extend(leaf for leaf, t in zip(leaves, mask) if t)
            entries.append((name, value, None) if not any(mask) else
                           (name, None, (tree, leaves, mask)))
        plan.append((frame, entries))

    def rebuild(values: list) -> list:
        it = iter(values)
        out = []
        for frame, entries in plan:
            local = {}
            for name, value, flat in entries:
                if flat is not None:
                    tree, leaves, mask = flat
                    value = tree.unflatten([next(it) if t else leaf
                                            for leaf, t in zip(leaves, mask)])
                local[name] = value
            out.append(dataclasses.replace(frame, locals=local))
        return out
    return traced, rebuild


class CliDebugger(cmd.Cmd):
    """JAX's text debugger: pdb's inspection commands on snapshot frames."""

    prompt = "(jdb) "

    def __init__(self, frames: list, thread_id: int | None, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
        self.intro = "Entering jdb:"

    def _print(self, text: str) -> None:
        print(text, file=self.stdout)

    def evaluate(self, expr: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})  # the user's own command

    def _show(self, expr: str, fmt: Callable[[Any], str]) -> None:
        try:
            self._print(fmt(self.evaluate(expr)))
        except Exception:
            self._print("*** " + traceback.format_exception_only(
                *sys.exc_info()[:2])[-1].strip())

    def default(self, line: str) -> None:
        """Evaluates an expression."""
        self._show(line, repr)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression"""
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression"""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source if frame.offset is not None else ()):
            if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(("->  " if i == frame.offset else "    ") + line)
        self._print("\n".join(lines))

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            self._print("At topmost frame.")
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame."""
        if self.frame_index == 0:
            self._print("At bottommost frame.")
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file."""
        self.print_context(num_lines=5)
    do_l = do_list

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else "    " + frame.source[frame.offset].strip())
        self._print("\n".join(lines))
    do_w = do_bt = do_where

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit)
        (exit)
        Quit the debugger. The program is given an exit command."""
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli(frames: list, thread_id: int | None, **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


_debuggers: dict = {"cli": (-1, _run_cli)}
_lock = threading.Lock()


def register_debugger(name: str, debugger: Callable[..., None], priority: int) -> None:
    """Add a backend ``debugger(frames, thread_id, **kwargs)``; the highest priority is
    the default."""
    if name in _debuggers:
        raise ValueError(f"Debugger with name \"{name}\" already registered.")
    _debuggers[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Callable[..., None]:
    """The backend named ``backend``, else the one of highest priority."""
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Enter the debugger here, with the values the program has here (at run time under
    jit). ``filter_frames`` leaves out funcgrad's own frames; ``num_frames`` keeps that
    many from the innermost; ``kwargs`` go to the backend (the text one takes ``stdin``
    and ``stdout``). With ``token`` (a pytree of arrays) it returns ``token``, after which
    the debugger runs; ``ordered`` is accepted (calls always run in program order)."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos
              if not (filter_frames and internal(info.filename))]
    del infos  # (frame objects hold cycles through their locals)
    if num_frames is not None:
        frames = frames[:num_frames]
    traced, rebuild = _flatten_locals(frames)
    token_leaves = tree_util.tree_leaves(token)

    def enter(*values: Any) -> None:
        thread = None if threading.current_thread() is threading.main_thread() else \
            threading.get_ident()
        with _lock:
            get_debugger(backend)(rebuild(list(values[len(token_leaves):])), thread, **kwargs)

    callback(enter, *token_leaves, *traced)
    return token
