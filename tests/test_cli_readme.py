"""Every concrete `egraph-tiles ...` command the README shows is accepted by the command line,
and every example file it names exists (the README must not drift from the CLI)."""

import re
import shlex
from pathlib import Path

import pytest

from egraph_tiles.cli import build_parser

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
COMMANDS = sorted({m.group(1).split("#")[0].strip() for m in
                   re.finditer(r"(?:^|&& |`)(egraph-tiles [^`\n]*)", README, re.M)})
# a command with arguments and no metavariables (`egraph-tiles nki` alone only names a subcommand)
CONCRETE = [c for c in COMMANDS if not re.search(r"\[|\.\.\.|\b[A-Z]{2,}\b", c)
            and (len(shlex.split(c)) > 2 or c.endswith("--version"))]


def test_the_readme_shows_concrete_optimize_check_and_version_commands():
    shown = {shlex.split(c)[1] for c in CONCRETE}
    assert {"optimize", "check", "--version"} <= shown, CONCRETE


@pytest.mark.parametrize("command", CONCRETE)
def test_a_readme_command_parses_and_names_existing_examples(command):
    argv = shlex.split(command)[1:]
    if argv != ["--version"]:
        build_parser().parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    for arg in argv:
        if arg.startswith("examples"):
            assert (root / arg).exists(), arg
