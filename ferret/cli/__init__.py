"""The `ferret` command: ingest, remove, compact, search, ask, chat, export, demo, eval, compile, runs, ui, bench."""
from __future__ import annotations

import sys

from ferret.cli import answer, bench, demo, experiments, index
from ferret.cli.arguments import Parser


def _parser() -> Parser:
    parser = Parser(prog="ferret", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (index, answer, demo, experiments, bench):
        group.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError, ConnectionError) as error:  # ConnectionError: a --ray ADDRESS
        print(f"ferret: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
