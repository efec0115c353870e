"""``pal <command> --help``: every subcommand says what it does, shows examples, and explains every option."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from pal.cli import build_parser


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_help_has_description_examples_and_option_help(name):
    sp = subcommands()[name]
    command = sp.prog.split()[-1]
    text = sp.format_help()
    assert sp.description and len(sp.description) > 40, f"pal {command}: no description"
    assert sp.epilog and "examples:\n" in sp.epilog, f"pal {command}: no examples"
    examples = sp.epilog.split("examples:\n", 1)[1].splitlines()
    assert examples and all(re.match(rf"  (\S+=\S+ )?pal {command}\b", e) for e in examples), examples
    undocumented = [a.dest for a in sp._actions if not a.help and not isinstance(a, argparse._HelpAction)]
    assert undocumented == [], f"pal {command}: options without help: {undocumented}"
    # the description keeps its line breaks (RawDescriptionHelpFormatter), examples are shown as written
    assert sp.description.splitlines()[0] in text and examples[0] in text


def test_format_and_store_actions_are_explained():
    cmds = subcommands()
    helps = {a.dest: a.help for a in cmds["analyse"]._actions}
    assert "table" in helps["format"] and "json" in helps["format"]
    store = cmds["store"]
    assert all(f"  {action}  " in store.epilog for action in ("info", "vacuum", "export"))


def test_help_runs_from_the_command_line():
    p = subprocess.run([sys.executable, "-m", "pal", "validate", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "examples:" in p.stdout and "placeholder reason" in p.stdout
