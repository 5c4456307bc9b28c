"""The command table and the exit codes, from the parser ``cli`` builds and the exit codes
it declares: each command with its arguments, what it does (its ``description``, which
``failpedia CMD --help`` prints too) and its options, and what each exit status means."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

from failpedia.docgen.markdown import cell, code, table

# What each command's exit statuses mean, as ``cli.exit_codes.EXIT_CODES`` declares them:
# ``(status, meaning)`` pairs by command, ``DEFAULT_CODES`` for every other command.
ExitCodes = Mapping[str, Sequence[tuple[str, str]]]
DEFAULT_CODES = "*"


def command_table(parser: argparse.ArgumentParser) -> str:
    """One row per command: how it is called, what it does, its options."""
    program = parser.prog
    rows = []
    helps = _command_helps(parser)
    for name, command in _commands(parser).items():
        required = [action for action in _options(command) if action.required]
        call = [program, name, *(_invocation(action) for action in required)]
        call.extend(_argument(action) for action in command._actions if not action.option_strings)
        options = [action for action in _options(command) if not action.required]
        rows.append(
            (
                cell(code(" ".join(call))),
                cell(command.description or helps.get(name, "")),
                cell(", ".join(code(_invocation(action)) for action in options) or "none"),
            )
        )
    common = "; ".join(
        f"{code(_invocation(action))}: {(action.help or '').replace('%%', '%')}"
        for action in _options(parser)
    )
    return (
        f"Before its command, `{program}` takes {common}. `{program} COMMAND --help` "
        "describes each command's options.\n\n"
        + table(("command", "what it does", "options"), rows)
    )


def exit_code_text(parser: argparse.ArgumentParser, exit_codes: ExitCodes) -> str:
    """The exit codes: those every command shares, then each command's own, in the
    parser's order."""
    lines = [f"Exit codes: {_meanings(exit_codes[DEFAULT_CODES])}. Where a command's differ:", ""]
    lines.extend(
        f"- `{parser.prog} {name}`: {_meanings(exit_codes[name])}"
        for name in _commands(parser)
        if name in exit_codes
    )
    return "\n".join(lines) + "\n"


def _meanings(codes: Sequence[tuple[str, str]]) -> str:
    return "; ".join(f"{status} {meaning}" for status, meaning in codes)


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _command_helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each command's one-line ``help``, what a command without a description says."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options a user may give: not ``--help``, not hidden ones, not the commands."""
    return [
        action
        for action in parser._actions
        if action.option_strings
        and action.help != argparse.SUPPRESS
        and not isinstance(action, argparse._HelpAction)
    ]


def _invocation(action: argparse.Action) -> str:
    """``--device {auto,cpu,cuda}``, ``--jobs N``, ``--check``: the longest spelling."""
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    return f"{flag} {_argument(action)}"


def _argument(action: argparse.Action) -> str:
    """What an argument looks like, as argparse's usage line writes it."""
    if isinstance(action.metavar, str):
        name = action.metavar
    elif action.choices is not None:
        name = "{" + ",".join(str(choice) for choice in action.choices) + "}"
    else:
        name = action.dest.upper() if action.option_strings else action.dest
    if action.nargs == "?":
        return f"[{name}]"
    if action.nargs == "*":
        return f"[{name} ...]"
    if action.nargs == "+":
        return f"{name} [{name} ...]"
    if action.nargs == argparse.REMAINDER:
        return f"-- {name} ..."
    return name
