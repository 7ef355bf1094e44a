"""Click plumbing shared by every command: the promises of the README's "What every command shares".

- Every error is one line on stderr and an exit code: a :class:`BenchscoreError` (exit 2, or its
  own code), a click usage error (unknown option, a folder where a file is expected: exit 2), and
  Ctrl-C (exit 130, which is neither a verdict nor bad input).
- Inputs are never modified. A path parameter is an **output** when it is named ``output``,
  ``output_dir``, ``out_dir`` or ``audit`` (``--output``, ``--output-dir``, an audit written beside
  an output); every other path
  parameter is an **input**. Before a command runs, an output that is one of its input files, or
  lies in (or is) one of its input folders, is refused (a blob store, ``--blobs``, is neither); while it runs, no atomic write may replace
  a file that the command read through the common readers (``inputs_guard``), so a path given as a
  name (``--suite NAME.json``) is covered too.
- Heavy modules are imported by the commands themselves, so ``--help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from . import guard
from .errors import BadInput, BenchscoreError

if TYPE_CHECKING:  # pragma: no cover - pathlib is imported when a command runs, not for --help
    from pathlib import Path

#: the parameter names that mean "an output path" everywhere (one name for one idea), and the working
#: stores a command both reads and writes (a blob store: neither an input nor an output)
from .provenance import OUTPUT_PARAMS, STORE_PARAMS  # noqa: E402

EXIT_INTERRUPTED = 130

#: the statuses and verdicts that are final: the result is what its contract calls complete or PASS and may
#: be used as it is (exit 0). Every other status a command writes (incomplete, provisional, FAIL, reduced,
#: a verify that differs, a judge or model call that failed) exits 1, after its output is written.
FINAL = frozenset({"complete", "PASS"})


def exit_for(*statuses: str | bool) -> None:
    """The one exit-code rule of the README's "What every command shares": return (exit 0) when every
    status is final (:data:`FINAL`, or ``True`` for a check that passed); otherwise exit 1. Call it after
    the output is written and printed."""
    from .errors import ExitCode

    if not all(s is True or (isinstance(s, str) and s in FINAL) for s in statuses):
        raise SystemExit(ExitCode.FAILED)


class Interrupted(BenchscoreError):
    """Ctrl-C: the command stopped before finishing; nothing was written."""

    exit_code = EXIT_INTERRUPTED


INTERRUPTED = "interrupted (Ctrl-C); nothing was written"
#: set by the SIGINT handler :meth:`Group.main` installs: a library may turn the KeyboardInterrupt it
#: was handed into an error of its own (pydantic-core building a validator raises a SchemaError that
#: reads "KeyboardInterrupt"), and an error after Ctrl-C is the interrupt's, not a crash
_sigint_seen = False


#: how long after a Ctrl-C the next ones are ignored: the command is on its way out (exit 130 within 2 s),
#: and a second Ctrl-C (``timeout -s INT`` sends two; an impatient user) must not break its clean-up
REPEAT_IGNORED = 5.0
_sigint_at: float | None = None


def _note_sigint(signum: int, frame: Any) -> None:
    global _sigint_seen, _sigint_at
    import time

    now = time.monotonic()
    if _sigint_at is not None and now - _sigint_at < REPEAT_IGNORED:
        return
    _sigint_seen = True
    _sigint_at = now
    signal.default_int_handler(signum, frame)


_exit_hook = False


def _ignore_sigint_from_now() -> None:
    """On the way out after Ctrl-C: a SIGINT after the exit hooks is ignored (Python's shutdown then puts back
    the default action, which would end the process by the signal, not with exit 130; an ignored one it leaves
    as it is). Until then :func:`_note_sigint` ignores it. Set at exit, not now: a test calling the CLI in-process
    would otherwise pass SIGINT ignored on to every process it starts."""
    global _exit_hook
    if not _exit_hook:
        import atexit

        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
        _exit_hook = True


@contextlib.contextmanager
def _ctrl_c() -> Iterator[None]:
    """Ctrl-C, however it surfaces, as :class:`Interrupted` (exit 130, one line)."""
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(INTERRUPTED) from None
    except BenchscoreError:
        raise  # a command's own answer, to Ctrl-C too (rxn predict: what was saved and how to resume)
    except Exception:
        if _sigint_seen:
            raise Interrupted(INTERRUPTED) from None
        raise


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _paths(value: Any) -> Iterator[Path]:
    if value is None:
        return
    if isinstance(value, list | tuple):
        for item in value:
            yield from _paths(item)
    elif isinstance(value, str | os.PathLike):
        from pathlib import Path

        yield Path(value)


def _file_keys(path: Path) -> set:
    """What identifies a file: its real path and, when it exists, its device and inode (hard links)."""
    keys: set = {os.path.realpath(path)}
    try:
        st = os.stat(path)
    except OSError:
        return keys
    keys.add((st.st_dev, st.st_ino))
    return keys


def _self_and_parents(path: str) -> Iterator[str]:
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


def refuse_overwriting_inputs(inputs: list[Path], outputs: list[tuple[str, Path]]) -> None:
    """Refuse an output that is an input file, or that lies in or is an input folder (linear in files)."""
    files: set = set()
    folders: set[str] = set()
    for src in inputs:
        if src.is_dir():
            folders.add(os.path.realpath(src))
        else:
            files |= _file_keys(src)
    written: dict = {}
    for option, out in outputs:
        for key in _file_keys(out):
            if key in written:
                raise BadInput(f"{option} and {written[key]} name the same file; give each output its own",
                               source=out)
            written[key] = option
    for option, out in outputs:
        if not files.isdisjoint(_file_keys(out)):
            raise BadInput(f"{option} is also an input of this command; inputs are never modified: "
                           "write the output elsewhere", source=out)
        real = os.path.realpath(out)
        for folder in _self_and_parents(real):
            if folder in folders:
                raise BadInput(f"{option} lies in the input folder {folder}; inputs are never modified: "
                               "write the output elsewhere", source=out)


def _check_paths(ctx: click.Context) -> None:
    """Refuse outputs that are inputs (see the module docstring)."""
    inputs: list[Path] = []
    outputs: list[tuple[str, Path]] = []
    for param in ctx.command.params:
        if not isinstance(param.type, click.Path) or param.name in STORE_PARAMS:
            continue
        values = list(_paths(ctx.params.get(param.name)))
        if param.name in OUTPUT_PARAMS:
            option = param.opts[0] if param.opts else param.name
            outputs.extend((option, p) for p in values)
        else:
            inputs.extend(values)
    refuse_overwriting_inputs(inputs, outputs)


#: the help of ``--quiet``, which every command has (:func:`quiet_option`)
QUIET_HELP = ("Print nothing on standard output (an error is still one line on standard error, and the exit code "
              "says how it went).")


def quiet_option() -> click.Option:
    """``--quiet``: the one option every command shares (added by :class:`Command` where a command has
    none of its own: Mira's commands say the same with their own flag)."""
    return click.Option(["--quiet"], is_flag=True, help=QUIET_HELP)


@contextlib.contextmanager
def _quiet_stdout(quiet: bool) -> Iterator[None]:
    if not quiet:
        yield
        return
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        yield


def _file_output(param: click.Parameter) -> bool:
    """A file output: an output parameter (``--output``, ``--audit``) whose path is a file, not a folder."""
    return param.name in OUTPUT_PARAMS and isinstance(param.type, click.Path) and not param.type.dir_okay


FORCE_HELP = ("Replace the output file even when it is not an earlier output of this command (by default only "
              "such a file is replaced; any other is one error line, and nothing is touched).")


def force_option() -> click.Option:
    """``--force``, which every command with a file output has (:class:`Command` adds it): see
    :func:`benchscore.common.atomic.refuse_to_replace`."""
    return click.Option(["--force"], is_flag=True, help=FORCE_HELP)


def _check_replaced(ctx: click.Context, force: bool) -> None:
    """Refuse, before anything is written, a file output that would replace a file this command did not write."""
    from . import provenance
    from .atomic import refuse_to_replace

    owner = provenance.command_path(ctx)
    for param in ctx.command.params:
        if _file_output(param):
            for path in _paths(ctx.params.get(param.name)):
                refuse_to_replace(path, owner, force=force)


class Command(click.Command):
    """A click command that checks its paths before running, records how it ran in the provenance of
    what it writes (``command`` and ``arguments``; ``record_invocation = False`` for a command that is
    no recipe of its own, like ``benchscore demo``), turns Ctrl-C into exit 130 and, with ``--quiet``
    (every command has it), prints nothing on standard output. A command with a file output gets ``--force``
    (:func:`force_option`), and never replaces a file it did not write without it (unless it extends its output
    itself: :attr:`extends_output`)."""

    record_invocation = True
    #: the command reads its file output back and extends it (``rxn predict`` resumes), refusing by itself a file
    #: it did not make: the rule of :func:`_check_replaced` leaves that output to it, and there is no --force
    extends_output = False
    _force: click.Option | None = None

    def _has_force(self) -> bool:
        return (not self.extends_output and any(_file_output(p) for p in self.params)
                and not any(p.name == "force" for p in self.params))

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        if self._has_force():
            if self._force is None:
                self._force = force_option()
            params = [*params[:len(self.params)], self._force, *params[len(self.params):]]
        return params

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared_quiet = not any(p.name == "quiet" for p in self.params)
        if self.shared_quiet:
            self.params.append(quiet_option())

    def invoke(self, ctx: click.Context) -> Any:
        quiet = bool(ctx.params.pop("quiet", False)) if self.shared_quiet else False
        _check_paths(ctx)
        if self._has_force():
            _check_replaced(ctx, bool(ctx.params.pop("force", False)))
        from . import provenance

        if self.record_invocation:
            recorded = provenance.invocation(provenance.command_path(ctx),
                                             provenance.arguments_record(self, ctx.params))
        else:
            recorded = provenance.not_recorded()
        with _ctrl_c(), guard.inputs_guard(), recorded, _quiet_stdout(quiet):
            try:
                return super().invoke(ctx)
            except BadInput as exc:  # two inputs given to each other's options: said as such (swapped.py)
                kinds = getattr(self, "input_kinds", None)
                if not kinds:
                    raise
                from .swapped import explain

                options = {p.name: (p.opts[0] if p.opts else p.name) for p in self.params if p.name}
                swapped = explain(exc, kinds, ctx.params, options)
                if swapped is None:
                    raise
                raise swapped from None


#: how long a command's summary in its group's ``--help`` may be: its whole first sentence (click's
#: default cuts it mid-phrase at about 45 characters); a longer first sentence still ends in "..."
SUMMARY_LIMIT = 200


class Group(click.Group):
    """A click group whose commands are :class:`Command` s and whose errors are one line each."""

    command_class = Command
    group_class = type  # sub-groups are of this same class

    def invoke(self, ctx: click.Context) -> Any:
        with _ctrl_c():
            return super().invoke(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but each command's summary is its whole first sentence (click cuts it at the width)."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(SUMMARY_LIMIT)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                            list[str]]:
        """As click's, but an unknown command is answered with the known ones closest to it
        (``benchscore rxnn``: ``Did you mean 'rxn'?``), lazily mounted commands included."""
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            import difflib

            known = [n for n in self.list_commands(ctx)
                     if not getattr(self.commands.get(n), "hidden", False)]
            close = difflib.get_close_matches(exc.command_name, known, n=3, cutoff=0.6)
            raise click.exceptions.NoSuchCommand(exc.command_name, possibilities=close, ctx=ctx) from None

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        global _sigint_at, _sigint_seen
        _sigint_at, _sigint_seen = None, False  # a new command (a test may run many in one process): none seen yet
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _note_sigint)
        _pipe_safe_stdout()
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except BenchscoreError as exc:
            if exc.exit_code == EXIT_INTERRUPTED:
                _ignore_sigint_from_now()
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:  # Ctrl-C outside a command (while parsing), or EOF at a prompt
            _ignore_sigint_from_now()
            click.echo(f"error: {INTERRUPTED}", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.ClickException as exc:
            command = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) else ""
            click.echo(f"error: {_one_line(exc.format_message())}{command}", err=True)
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


class _PipeSafe:
    """Standard output that survives its reader going away (``benchscore ... | head -1``): on a broken pipe the
    file descriptor is pointed at /dev/null and the command goes on, so its exit code is its result's (the
    README's rule), never click's "exit 1 on a closed pipe" nor Python's exit 120 for a failed final flush."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _silence(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()
            with contextlib.suppress(BrokenPipeError):
                self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _pipe_safe_stdout() -> None:
    """Wrap ``sys.stdout`` in :class:`_PipeSafe` when it is a real file descriptor (not a test's capture)."""
    if isinstance(sys.stdout, _PipeSafe):
        return
    try:
        sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    sys.stdout = _PipeSafe(sys.stdout)  # type: ignore[assignment]


class AnyCaseChoice(click.Choice):
    """A choice given in any case (``S07`` or ``s07``), shown in help and errors as documented
    (``{S07|S08|...}``) and passed to the command in that documented case."""

    def __init__(self, choices: Any) -> None:
        super().__init__(list(choices), case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        shown = "|".join(map(str, self.choices))
        return f"{{{shown}}}" if param.required and param.param_type_name == "argument" else f"[{shown}]"

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        return f"{value!r} is not one of {', '.join(map(repr, self.choices))}."


def group(name: str | None = None, **kwargs: Any):
    """Decorator: ``@group("tcsexam")`` makes a :class:`Group`."""
    kwargs.setdefault("cls", Group)
    return click.group(name, **kwargs)


class LazyGroup(Group):
    """A group whose sub-commands are imported only when one is used (``benchscore --help`` stays fast).

    ``lazy`` maps a command name to ``(module path, attribute, one-line help)``; the help line is
    shown by ``--help`` without importing the module.
    """

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            import importlib

            module, attribute, _ = self.lazy[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name][2]))
            else:
                cmd = self.commands[name]
                if not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(SUMMARY_LIMIT)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
