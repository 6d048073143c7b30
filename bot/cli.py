"""The ``weekly-shop`` command: the console app, ``weekly-shop sandbox`` for the local Slack, or
``weekly-shop dev`` for the bot on your own Slack over Socket Mode."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["sandbox"]:
        from bot.sandbox.server import main as sandbox_main

        return sandbox_main(args[1:])
    if args[:1] == ["dev"]:
        from bot.dev.run import main as dev_main

        return dev_main(args[1:])
    from workflow.shop.console import main as console_main

    return console_main(args)


if __name__ == "__main__":
    sys.exit(main())
