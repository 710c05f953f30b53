"""The shapes a traceback is pasted in, each recognised and rewritten as Python prints
it (`Traceback (most recent call last):`, `  File "p", line N, in f`, its source line,
`Class: message`), so one reader (tracebacks.py) reads them all: terminal colours,
log-record prefixes, pytest's failure reports (`E   ` and `>` lines, `path:line:`
locations), IPython's framed tracebacks, and one-line `path:line: Class: message`
reports (a warning, pytest's `--tb=line`)."""

from __future__ import annotations

import re

HEADER = "Traceback (most recent call last):"
# Python's words between the exceptions of a chain.
CHAIN_SENTENCES = ("The above exception was the direct cause of the following exception:",
                   "During handling of the above exception, another exception occurred:")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ANSI_LOST_ESCAPE = re.compile(r"\[(?:\d{1,3};)*\d{1,3}m")  # `[0;31m`: its ESC lost in a copy
_TIMESTAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?"
                        r"(?:Z|[+-]\d\d:?\d\d)?\]?(?:[ \t]?[-|:])?[ \t]?")
_LEVEL = r"(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG)"
# `ERROR:root:`, `WARNING:jax._src.xla_bridge:`, `my.logger - ERROR - `, `ERROR - `, `[ERROR] `
_LOG_RECORD = re.compile(rf"^(?:{_LEVEL}:[\w.<>-]*:|(?:[\w.]+ - )?{_LEVEL} - |\[{_LEVEL}\] )")
# absl: `E1205 12:00:00.123456  1234 file.py:12] `
_ABSL = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.-]+:\d+\] ")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_QUOTED = re.compile(r"^>(?!>>) ?")  # a Markdown quote's marker (not Python's `>>>` prompt)

# pytest: `____ test_x ____` banners, `=== FAILURES ===` rules, `--- Captured ... ---`.
_PYTEST_BANNER = re.compile(r"^_{3,} (.+?) _{3,}\s*$")
_PYTEST_RULE = re.compile(r"^={3,}(?: (.+?) ={3,})?\s*$")
_PYTEST_CAPTURED = re.compile(r"^-{3,} (Captured .+?) -{3,}\s*$")
_PYTEST_ERROR = re.compile(r"^E(?: (.*))?$")
_PYTEST_SOURCE = re.compile(r"^>(.*)$")
_PYTEST_LOCATION = re.compile(r"^(\S[^:\n]*?):(\d+):(?: in (\S+)| ([\w.]+))?\s*$")
_PYTEST_DEF = re.compile(r"^\s*(?:async\s+)?def (\w+)\(")
_PYTEST_SEPARATOR = re.compile(r"^(?:_ ){5,}_?\s*$")
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S+ - (.*)$")

# IPython: `TypeError    Traceback (most recent call last)`, `Cell In[3], line 5`,
# `File ~/x.py:12, in f(x)`, `----> 5 code`, IPython 7's `<ipython-input-3-..> in f(x)`
# (a cell's top level: `in <cell line: 21>()`; Colab links the file: `[x.py](https://..) in f`;
# a paste may cut the file: `in <module>()`).
_IPY_HEADER = re.compile(r"^(\S+)\s+Traceback \(most recent call last\)\s*$")
_IPY_CELL = re.compile(r"^Cell In\s*\[(\d+)\], line (\d+)(?:, in (\S+?)(?:\(.*)?)?\s*$")
_IPY_FILE = re.compile(r"^File (.+?):(\d+)(?:, in (\S+?)(?:\(.*)?)?\s*$")
_IPY_OLD_FILE = re.compile(r"^(?:\[?(<ipython-input-[^>]*>|\S+\.py)(?:\]\([^)\s]*\))? )?"
                           r"in (<cell line: \d+>|\S+?)(?:\(.*)?\s*$")
_IPY_CELL_CUT = "<ipython-input>"  # the file of a frame whose file the paste cut
_IPY_ARROW = re.compile(r"^-*> ?\s*(\d+)\s?(.*)$")
_IPY_CONTEXT = re.compile(r"^\s+\d+\s")
_IPY_SKIPPED = re.compile(r"^\s*\[\.\.\. skipping .*\]\s*$")
_IPY_RULE = re.compile(r"^-{40,}\s*$")

# `path.py:12: UserWarning: message` (warnings' format; pytest --tb=line)
LOCATED = re.compile(r"^\s*(\S+\.py):(\d+): ([A-Za-z_][\w.]*(?:Error|Warning|Exception)\w*): "
                     r"(.*)$")


def plain(text: str) -> str:
    """`text` without colours, code fences, a Markdown quote's markers (on every line),
    log-record prefixes or a common indent."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if "[0m" in text:
        text = _ANSI_LOST_ESCAPE.sub("", text)
    lines = [line for line in text.split("\n") if not _FENCE.match(line)]
    if all(_QUOTED.match(line) for line in lines if line.strip()):
        lines = [_QUOTED.sub("", line, count=1) for line in lines]
    return _dedented([_unprefixed(line) for line in lines])


def _unprefixed(line: str) -> str:
    line = _TIMESTAMP.sub("", line, count=1)
    return _ABSL.sub("", _LOG_RECORD.sub("", line, count=1), count=1)


def _dedented(lines: list[str]) -> str:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines)


def is_pytest(text: str) -> bool:
    """pytest's report: `E` lines with `>` or `path:line:` lines, or a failure's banner
    under its FAILURES rule (`--tb=native`)."""
    lines = text.split("\n")
    if any(_PYTEST_RULE.match(line) and "FAILURES" in line for line in lines) and \
            any(_PYTEST_BANNER.match(line) for line in lines):
        return True
    errors = sum(1 for line in lines if _PYTEST_ERROR.match(line) and line.strip() != "E")
    return errors > 0 and any(_PYTEST_SOURCE.match(line) or _PYTEST_LOCATION.match(line)
                              for line in lines)


def pytest_sections(text: str) -> list[tuple[str | None, str]]:
    """(label, text) of each part of pytest's output that may hold a failure: each
    failure under its `____ test ____` banner, each captured output, and, when there
    is no failure report, the short summary's lines. Failures come rewritten as
    Python prints tracebacks."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    summary: list[str] = []
    in_summary = False
    for line in text.split("\n"):
        banner, rule, captured = (_PYTEST_BANNER.match(line), _PYTEST_RULE.match(line),
                                  _PYTEST_CAPTURED.match(line))
        if banner or captured or rule:
            test = (sections[-1][0] or "").split(": Captured")[0] if captured else None
            label = banner.group(1) if banner else \
                f"{test or 'output'}: {captured.group(1)}" if captured else None
            in_summary = bool(rule and rule.group(1) and "short test summary" in rule.group(1))
            sections.append((label, []))
            continue
        (summary if in_summary else sections[-1][1]).append(line)
    failures = [(label, _pytest_failure(lines) if not label or "Captured" not in label
                 else "\n".join(lines)) for label, lines in sections if any(lines)]
    failures = [(label, body) for label, body in failures if body.strip() and (
        label and "Captured" not in label or _holds_one(body))]
    if not any(label and "Captured" not in label for label, _ in failures):
        failures += [(None, found.group(1)) for found in map(_PYTEST_SUMMARY.match, summary)
                     if found]
    return failures


def _holds_one(text: str) -> bool:
    """Whether text outside pytest's failure reports (its header, progress, summary
    lines, captured output) holds a traceback or a `path:line: Class: message` line."""
    return any(line.rstrip() == HEADER or LOCATED.match(line) for line in text.split("\n"))


def _pytest_failure(lines: list[str]) -> str:
    """One failure report as Python prints its traceback (a chain: each exception's)."""
    if not any(_PYTEST_ERROR.match(line) and line.strip() != "E" for line in lines):
        return "\n".join(lines)  # --tb=native, or no failure here
    parts: list[str] = []
    frames: list[list[str]] = []
    errors: list[str] = []
    source, function, expect_code = "", "?", False
    for line in lines:
        if line.strip() in CHAIN_SENTENCES:
            parts.append(_traceback(frames, errors))
            parts.append(line.strip())
            frames, errors, source, function = [], [], "", "?"
            continue
        error, location = _PYTEST_ERROR.match(line), _PYTEST_LOCATION.match(line)
        if error and (errors or line.startswith("E ")):
            errors.append(error.group(1) or "")
        elif location:
            named, raised = location.group(3), location.group(4)
            if raised and errors:
                errors = _with_class(errors, raised)
            frames.append([location.group(1), location.group(2), named or function,
                           "" if named else source])
            expect_code, source = bool(named), ""
        elif expect_code and line.strip():
            frames[-1][3], expect_code = line.strip(), False
        elif _PYTEST_SOURCE.match(line):
            source = _PYTEST_SOURCE.match(line).group(1).strip()  # type: ignore[union-attr]
        elif _PYTEST_DEF.match(line):
            function = _PYTEST_DEF.match(line).group(1)  # type: ignore[union-attr]
        elif _PYTEST_SEPARATOR.match(line):
            function = "?"
    parts.append(_traceback(frames, errors))
    return "\n\n".join(parts)


def _with_class(errors: list[str], raised: str) -> list[str]:
    """The `E` lines of one exception, their class first: pytest prints a failed
    `assert` without one, and names it on the location line after."""
    errors = _dedent(errors)
    first = errors[0] if errors else ""
    if first.partition(":")[0].rpartition(".")[2] != raised:
        errors = [f"{raised}: {first}", *errors[1:]]
    return errors


def _dedent(lines: list[str]) -> list[str]:
    indent = min((len(e) - len(e.lstrip()) for e in lines if e.strip()), default=0)
    return [e[indent:] for e in lines]


def _traceback(frames: list[list[str]], errors: list[str]) -> str:
    errors = _dedent(errors)
    if errors and errors[0].startswith("assert "):
        errors = _with_class(errors, "AssertionError")
    body = [HEADER] + [f'  File "{path}", line {line}, in {function}'
                       + (f"\n    {code}" if code else "")
                       for path, line, function, code in frames]
    return "\n".join(body + errors).rstrip("\n")


def is_ipython(text: str) -> bool:
    return any(_IPY_HEADER.match(line) or _IPY_CELL.match(line) or
               line.startswith(("<ipython-input-", "[<ipython-input-"))
               for line in text.split("\n"))


def from_ipython(text: str) -> str:
    """IPython's framed traceback as Python prints it (its context lines, rules and
    `[... skipping hidden N frame]` lines left out)."""
    out: list[str] = []
    frame: list | None = None  # [path, line, function, code]
    in_frames = False
    for line in text.split("\n"):
        header, cell, file, old = (_IPY_HEADER.match(line), _IPY_CELL.match(line),
                                   _IPY_FILE.match(line), _IPY_OLD_FILE.match(line))
        if header:
            _flush(out, frame)
            frame, in_frames = None, True
            out.append(HEADER)
        elif in_frames and (cell or file or old):
            _flush(out, frame)
            if cell:
                frame = [f"<cell In[{cell.group(1)}]>", cell.group(2),
                         cell.group(3) or "<module>", ""]
            elif file:
                frame = [file.group(1), file.group(2), file.group(3) or "<module>", ""]
            else:
                function = old.group(2)  # type: ignore[union-attr]
                frame = [old.group(1) or _IPY_CELL_CUT, "",  # type: ignore[union-attr]
                         "<module>" if function.startswith("<cell") else function, ""]
        elif in_frames and _IPY_ARROW.match(line) and frame is not None:
            arrow = _IPY_ARROW.match(line)
            frame[1] = frame[1] or arrow.group(1)  # type: ignore[union-attr]
            frame[3] = arrow.group(2).strip()  # type: ignore[union-attr]
        elif in_frames and _IPY_SKIPPED.match(line):
            continue
        elif in_frames and (not line.strip() or _IPY_CONTEXT.match(line)
                            or _IPY_RULE.match(line)):
            continue
        elif _IPY_RULE.match(line):
            continue
        else:
            if in_frames:
                _flush(out, frame)
                frame, in_frames = None, False
            out.append(line)
    _flush(out, frame)
    return "\n".join(out)


def _flush(out: list[str], frame: list | None) -> None:
    if frame is not None:
        path, line, function, code = frame
        out.append(f'  File "{path}", line {line or 0}, in {function}')
        if code:
            out.append(f"    {code}")


def located_traceback(found: re.Match) -> str:
    """A `path:line: Class: message` line as a one-frame traceback."""
    path, line, exception, message = found.groups()
    return f'{HEADER}\n  File "{path}", line {line}, in ?\n{exception}: {message}'
