"""Shell completion for ``harkback``: bash and zsh scripts written from the argument parser.

``harkback completion bash`` (or ``zsh``) prints a script; ``eval "$(harkback completion
bash)"`` in a shell's start-up file loads it. The script knows the commands, their options
and the choices of those that have some (rankers, summarizers, import kinds) as they were
when it was printed; paths complete as files. Nothing runs ``harkback`` while completing,
so a tab costs no start-up.

>>> from harkback.pipeline.cli import build_parser
>>> tree = command_tree(build_parser())
>>> [c.name for c in tree.commands][:3], "--version" in tree.words()
(['ingest', 'search', 'recent'], True)
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import attrs

from harkback.pipeline.cli_edges import given_path

SHELLS = ("bash", "zsh")


@attrs.frozen
class Option:
    """One option as completion sees it: its spellings, whether it takes a value, and
    whether that value is a path or one of a few choices."""

    names: tuple[str, ...]
    help: str
    takes_value: bool = False
    files: bool = False
    choices: tuple[str, ...] = ()
    repeats: bool = False


@attrs.frozen
class Command:
    """A command (or the program itself): its options, its positional words, its
    subcommands."""

    name: str
    help: str
    options: tuple[Option, ...] = ()
    commands: tuple[Command, ...] = ()
    positional_files: bool = False
    positional_choices: tuple[str, ...] = ()
    positional_help: str = ""

    def words(self) -> tuple[str, ...]:
        """What may follow: subcommands, positional choices, every option's spelling."""
        return (tuple(c.name for c in self.commands) + self.positional_choices
                + tuple(n for o in self.options for n in o.names))

    def walk(self, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
        """Each command below and including this one, with the words that lead to it."""
        yield path, self
        for command in self.commands:
            yield from command.walk((*path, command.name))


def _short(text: str | None) -> str:
    """A help text cut to its first clause, without argparse's ``%(...)s`` fields."""
    plain = re.sub(r"%\(\w+\)s", "", text or "").replace("%%", "%")
    plain = re.split(r";| \(|: ", plain, maxsplit=1)[0]
    return " ".join(plain.split())[:70]


def _choices(action: argparse.Action) -> tuple[str, ...]:
    return tuple(str(c) for c in action.choices) if action.choices is not None else ()


def names_a_file(action: argparse.Action) -> bool:
    """Whether the action's value is completed as a file: a ``Path`` (:func:`given_path`,
    which refuses an empty one), or a type that says so (``--db``, a path or a server URL
    kept as written)."""
    return (action.type in (Path, given_path)
            or bool(getattr(action.type, "names_a_file", False)))


def command_tree(parser: argparse.ArgumentParser, name: str = "harkback",
                 help: str = "") -> Command:
    """The commands, options and choices of ``parser``, as the scripts need them."""
    options: list[Option] = []
    commands: list[Command] = []
    files, positional_help = False, ""
    choices: tuple[str, ...] = ()
    for action in parser._actions:  # argparse has no public walk over its actions
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            commands += [command_tree(sub, sub_name, helps.get(sub_name, ""))
                         for sub_name, sub in action.choices.items()]
        elif action.option_strings:
            options.append(Option(
                names=tuple(action.option_strings),
                help=_short(action.help).strip(" .,") or action.dest.replace("_", " "),
                takes_value=action.nargs != 0, files=names_a_file(action),
                choices=_choices(action),
                repeats=isinstance(action, argparse._AppendAction | argparse._ExtendAction)))
        elif not files and not choices:
            files, choices = names_a_file(action), _choices(action)
            positional_help = _short(action.help) or action.dest
    return Command(name=name, help=_short(help), options=tuple(options),
                   commands=tuple(commands), positional_files=files,
                   positional_choices=choices, positional_help=positional_help)


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    tree = command_tree(parser)
    return bash_script(tree) if shell == "bash" else zsh_script(tree)


def bash_script(tree: Command) -> str:
    """A bash function completing ``harkback``, registered with ``complete``."""
    steps = [f'"{" ".join(path[:-1])}|{path[-1]}"' for path, _ in tree.walk() if path]
    every = {o.names[0]: o for _, c in tree.walk() for o in c.options}
    file_options = sorted(n for o in every.values() if o.files for n in o.names)
    value_options = sorted(n for o in every.values() if o.takes_value and not o.files
                           and not o.choices for n in o.names)
    lines = [
        "# bash completion for harkback; load it with: eval \"$(harkback completion bash)\"",
        "_harkback() {",
        '    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
        # bash splits --ranker=h at the "=" (COMP_WORDBREAKS): the value is completed
        # after the option as after --ranker h, not as a word of its own.
        '    if [[ $cur == = ]]; then cur=""',
        '    elif [[ $prev == = && $COMP_CWORD -gt 1 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}',
        "    fi",
        '    local path="" word i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        "        word=${COMP_WORDS[i]}",
        '        case "$path|$word" in',
        f"            {'|'.join(steps)}) path=\"${{path:+$path }}$word\" ;;",
        "        esac",
        "    done",
        "    case $prev in",
        f"        {'|'.join(file_options)})",
        "            compopt -o filenames 2>/dev/null",
        '            COMPREPLY=($(compgen -f -- "$cur")); return ;;',
    ]
    for option in sorted(every.values(), key=lambda o: o.names):
        if option.choices:
            lines.append(f"        {'|'.join(option.names)}) COMPREPLY=($(compgen -W "
                         f"\"{' '.join(option.choices)}\" -- \"$cur\")); return ;;")
    # A value no list holds (a number, a time, a name): nothing to offer, and not the file
    # names that ``complete -o default`` falls back to when a completion offers nothing.
    lines += [f"        {'|'.join(value_options)})",
              "            compopt +o default +o bashdefault 2>/dev/null",
              "            COMPREPLY=(); return ;;",
              "    esac",
              '    local subs="" opts="" files=""',
              "    case $path in"]
    for path, command in tree.walk():
        subs = " ".join((*(c.name for c in command.commands), *command.positional_choices))
        opts = " ".join(n for o in command.options for n in o.names)
        files = "; files=1" if command.positional_files else ""
        lines.append(f"        \"{' '.join(path)}\") subs=\"{subs}\"; opts=\"{opts}\"{files} ;;")
    lines += [
        "    esac",
        "    if [[ $cur == -* ]]; then",
        '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "    elif [[ -n $files ]]; then",
        "        compopt -o filenames 2>/dev/null",
        '        COMPREPLY=($(compgen -f -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -W "${subs:-$opts}" -- "$cur"))',
        "    fi",
        "}",
        "complete -o bashdefault -o default -F _harkback harkback",
        "",
    ]
    return "\n".join(lines)


def _zsh_text(text: str, *, in_brackets: bool = False) -> str:
    """``text`` safe in a single-quoted ``_arguments`` spec: between an option's brackets
    (``[`` and ``]`` escaped) or in a ``name:description`` item (``:`` escaped)."""
    quoted = text.replace("'", "'\\''")
    if in_brackets:
        return quoted.replace("[", "\\[").replace("]", "\\]")
    return quoted.replace(":", "\\:")


def _zsh_option(option: Option) -> str:
    help = _zsh_text(option.help, in_brackets=True)
    value = ""
    if option.files:
        value = ":path:_files"
    elif option.choices:
        value = f":value:({' '.join(option.choices)})"
    elif option.takes_value:
        value = ":value: "
    many = "*" if option.repeats else ""
    # ``--ranker=`` in the spec: the value may follow in the same word after "=" as well
    # as in the next word (argparse takes both); without it ``--ranker=<Tab>`` offered
    # nothing.
    spelled = [f"{n}=" if value and n.startswith("--") else n for n in option.names]
    if len(option.names) == 1:
        return f"'{many}{spelled[0]}[{help}]{value}'"
    exclusive = "" if many else f"({' '.join(option.names)})"
    return f"'{many}{exclusive}'{{{','.join(spelled)}}}'[{help}]{value}'"


def _zsh_function(path: tuple[str, ...], command: Command) -> list[str]:
    name = "_" + "_".join(("harkback", *path)).replace("-", "_")
    specs = [_zsh_option(o) for o in command.options]
    if command.commands:
        items = " ".join(f"'{c.name}:{_zsh_text(c.help)}'" for c in command.commands)
        cases = [f"        {c.name}) {name}_{c.name.replace('-', '_')} ;;"
                 for c in command.commands]
        return [f"{name}() {{",
                "    local curcontext=$curcontext state line",
                f"    local -a commands=({items})",
                "    _arguments -C " + " ".join([*specs, "'1: :->command'", "'*:: :->args'"]),
                "    case $state in",
                "      command) _describe -t commands 'harkback command' commands ;;",
                "      args)",
                "        case $words[1] in",
                *cases,
                "        esac ;;",
                "    esac",
                "}"]
    if command.positional_files:
        specs.append("'1:file:_files'")
    elif command.positional_choices:
        specs.append(f"'1:value:({' '.join(command.positional_choices)})'")
    elif command.positional_help:
        specs.append(f"'1:{_zsh_text(command.positional_help)}: '")
    return [f"{name}() {{", "    _arguments " + " ".join(specs), "}"]


def zsh_script(tree: Command) -> str:
    """zsh functions completing ``harkback`` (``_arguments``), registered with ``compdef``;
    the script also works as a ``_harkback`` file in ``$fpath``."""
    lines = ["#compdef harkback",
             "# zsh completion for harkback; load it with: eval \"$(harkback completion zsh)\""]
    for path, command in tree.walk():
        lines += _zsh_function(path, command)
    lines += ['if [[ $zsh_eval_context[-1] == loadautofunc ]]; then',
              '    _harkback "$@"',
              "else",
              "    compdef _harkback harkback",
              "fi",
              ""]
    return "\n".join(lines)
