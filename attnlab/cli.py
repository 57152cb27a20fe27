"""The `attnlab` command: `attnlab app` serves the app, `attnlab bench` and `attnlab train` run those commands.

`attnlab app [ARGS]` is `streamlit run app.py [ARGS]` on the clone's app.py, or on the copy a wheel installed
(`pip install '.[app]'`, see `attnlab.appfiles`); `attnlab bench ...` is `python -m attnlab.bench ...` and
`attnlab train ...` is `python -m attnlab.train ...`, the same `main(argv)`. Nothing heavier than the standard
library is imported before a subcommand is chosen, and Streamlit only by the process `attnlab app` starts.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from attnlab import appfiles

APP = appfiles.entry()  # the clone's app.py, else the copy a wheel installed (attnlab.appfiles)
USAGE = """usage: attnlab {app,bench,train} [ARGS...]

  attnlab app [ARGS]      serve the Streamlit app (ARGS go to `streamlit run`, e.g. --server.port 8502)
  attnlab bench [ARGS]    time attention implementations: python -m attnlab.bench (attnlab bench --help)
  attnlab train [ARGS]    train a small causal decoder: python -m attnlab.train (attnlab train --help)"""
NO_STREAMLIT = "attnlab app needs Streamlit, which the library alone does not install: pip install 'attnlab[app]'"
NO_APP = f"attnlab app found no app.py with its views/ (looked in {', '.join(map(str, appfiles.homes()))})"


def app(args: list[str]) -> int:
    """`streamlit run` on the app's entry point in a child process; its exit status is ours."""
    if importlib.util.find_spec("streamlit") is None:
        print(NO_STREAMLIT, file=sys.stderr)
        return 1
    if not APP.is_file():
        print(NO_APP, file=sys.stderr)
        return 1
    return subprocess.call([sys.executable, "-m", "streamlit", "run", str(APP), *args])


def bench(args: list[str]) -> int:
    """`python -m attnlab.bench ARGS`."""
    from attnlab.bench.__main__ import main

    return main(args)


def train(args: list[str]) -> int:
    """`python -m attnlab.train ARGS`."""
    from attnlab.train import main

    main(args)
    return 0


COMMANDS = {"app": app, "bench": bench, "train": train}


def main(argv: list[str] | None = None) -> int:
    """Dispatch on the first argument; usage (exit status 2 when it is missing or unknown)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    if command is None:
        print(f"attnlab: unknown command {argv[0]!r}\n{USAGE}", file=sys.stderr)
        return 2
    return command(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
