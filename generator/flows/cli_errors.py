"""invoke's own command-line parse errors as the tasks' contract: one ``error: ...`` line naming the option or
task, exit 2 (tasks.py). Pure glue around :class:`invoke.program.Program`."""
from __future__ import annotations


def one_line_parse_errors(die) -> None:
    """invoke's own parse errors (an unknown task or option, an option without its value) print invoke's one line
    and exit 1: make them the contract's ``error: ...`` line and exit 2. invoke imports tasks.py after parsing
    its core options and before parsing the tasks' (``invoke.program.Program.parse_tasks``), so wrapping that
    method (and ``parse_cleanup``: ``--help TASK``) covers every task option; errors in invoke's core options
    (``invoke --bogus``), met before this file is read, keep invoke's form. ``die(line)``: print the line and exit
    2 (tasks.py's ``_die``)."""
    try:
        from invoke.exceptions import ParseError
        from invoke.program import Program
    except ImportError:                   # another invoke: keep its own behaviour
        return

    def wrap(method):
        def parse(self):
            try:
                return method(self)
            except ParseError as e:
                die(parse_message(str(e)))
        parse.one_line = True
        return parse

    for name in ("parse_tasks", "parse_cleanup"):
        method = getattr(Program, name, None)
        if method is not None and not getattr(method, "one_line", False):
            setattr(Program, name, wrap(method))


def parse_message(msg: str) -> str:
    """invoke's parse-error text as the contract's line, naming the option or task."""
    import re

    m = re.match(r"No idea what '(.*)' is!", msg)
    if m:
        what = "option" if m.group(1).startswith("-") else "task"
        return f"{m.group(1)}: unknown {what} (invoke --list; invoke TASK --help)"
    m = re.match(r"Flag <Argument: ([\w-]+).*needed value", msg)
    if m:
        return f"--{m.group(1).replace('_', '-')}: needs a value"
    return " ".join(msg.split())
