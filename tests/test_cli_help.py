"""Every command's --help starts with what it does, before its options. (docs/reference.md shows
each command's help as argparse prints it: scripts/gen_docs.py writes it.)"""

import argparse

import pytest

from torch_export_names.tools import cli


def _commands(parser: argparse.ArgumentParser, path=()):
    """Every command path of the parser: (), ("doctor",), ("patch", "list"), ..."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(cli._parser()))


def test_every_command_is_listed():
    assert {" ".join(c) for c in COMMANDS} >= {
        "",
        "doctor",
        "patch",
        "patch list",
        "patch status",
        "patch verify",
        "patch apply",
        "patch revert",
        "run",
    }


def _help(capsys, *path: str) -> str:
    with pytest.raises(SystemExit) as exit:
        cli.main([*path, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", COMMANDS, ids=lambda c: " ".join(c) or "torch-export-names")
def test_help_starts_with_what_the_command_does(capsys, path):
    text = _help(capsys, *path)
    assert text.startswith(f"usage: {' '.join(['torch-export-names', *path])}")
    # The paragraph after the usage lines: a sentence, not the list of options.
    description = text.split("\n\n")[1]
    assert description[0].isupper() and not description.endswith(":"), text
    assert not description.startswith(("options", "positional arguments")), text


@pytest.mark.parametrize("path", COMMANDS, ids=lambda c: " ".join(c) or "torch-export-names")
def test_usage_lines_fit_80_columns(capsys, monkeypatch, path):
    # argparse wraps what it writes to $COLUMNS; a usage given by hand must fit as well
    monkeypatch.setenv("COLUMNS", "80")
    usage = _help(capsys, *path).split("\n\n")[0]
    assert max(len(line) for line in usage.splitlines()) <= 80, usage
