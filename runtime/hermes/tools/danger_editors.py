"""Command languages that can start a shell: awk programs, vim/ex commands, less keys.

Each reader returns ``(runs commands, the literal shell commands it runs)``:
``awk 'BEGIN{system("rm -rf x")}'`` runs ``rm -rf x``; ``vim -c ':!id'`` runs
``id``; ``less +'!id'`` runs ``id``. A command built at run time (``system(c)``)
makes the first true with nothing to follow. What only edits, prints or
searches (``awk '{print $1}'``, ``vim -c '%s/a/b/|wq'``, ``less +/a|b``) is False.
"""

from __future__ import annotations

import re

Reading = tuple[bool, list[str]]

# ---------------------------------------------------------------------- awk

AWK_CALL = re.compile(r"\bsystem\s*\(\s*$")
AWK_PIPE = re.compile(r"(?<!\|)\|&?(?!\|)")
AWK_RUNS = re.compile(r"\bsystem\s*\(|@load\b")
REGEX_AFTER = frozenset("(,{};!~&|=?:\n")
AWK_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def awk_program(program: str) -> Reading:
    """Whether an awk program runs commands (``system()``, ``print | "cmd"``,
    ``"cmd" | getline``, ``@load``), and the literal commands among them."""
    tokens = _awk_tokens(program)
    skeleton = "".join('"S"' if kind == "str" else text if kind == "code" else "/R/"
                       for kind, text in tokens)
    runs = bool(AWK_RUNS.search(skeleton) or AWK_PIPE.search(skeleton))
    return runs, _awk_commands(tokens) if runs else []


def _awk_commands(tokens: list[tuple[str, str]]) -> list[str]:
    """Literal strings given to ``system(`` or a pipe (adjacent strings joined)."""
    found: list[str] = []
    for index, (kind, _) in enumerate(tokens):
        if kind != "str" or (index and tokens[index - 1][0] == "str"):
            continue
        before = tokens[index - 1][1].rstrip() if index and tokens[index - 1][0] == "code" else ""
        after = next((t for k, t in tokens[index + 1:] if k != "str" and t.strip()), "")
        piped_in = bool(AWK_PIPE.match(after.lstrip())) and not after.lstrip().startswith("||")
        if AWK_CALL.search(before) or AWK_PIPE.search(before[-2:]) or piped_in:
            found.append(_joined_strings(tokens, index))
    return found


def _joined_strings(tokens: list[tuple[str, str]], index: int) -> str:
    parts = [tokens[index][1]]
    for kind, text in tokens[index + 1:]:
        if kind == "str":
            parts.append(text)
        elif text.strip():
            break
    return "".join(parts)


def _awk_tokens(program: str) -> list[tuple[str, str]]:
    """``(kind, text)`` along an awk program: ``str`` (unescaped), ``re``, ``code``."""
    tokens: list[tuple[str, str]] = []
    code: list[str] = []
    last, index = "\n", 0
    while index < len(program):
        char = program[index]
        if char in '"#' or (char == "/" and last in REGEX_AFTER):
            if code:
                tokens.append(("code", "".join(code)))
                code = []
            if char == '"':
                text, index = _awk_string(program, index + 1)
                tokens.append(("str", text))
            elif char == "#":
                end = program.find("\n", index)
                index = len(program) if end < 0 else end
            else:
                index = _awk_regex_end(program, index + 1)
                tokens.append(("re", ""))
            last = '"' if char != "#" else last
            continue
        code.append(char)
        if not char.isspace() or char == "\n":
            last = char
        index += 1
    if code:
        tokens.append(("code", "".join(code)))
    return tokens


def _awk_string(program: str, index: int) -> tuple[str, int]:
    parts: list[str] = []
    while index < len(program) and program[index] != '"':
        if program[index] == "\\" and index + 1 < len(program):
            parts.append(AWK_ESCAPES.get(program[index + 1], program[index + 1]))
            index += 2
        else:
            parts.append(program[index])
            index += 1
    return "".join(parts), index + 1


def _awk_regex_end(program: str, index: int) -> int:
    while index < len(program) and program[index] not in "/\n":
        if program[index] == "\\":
            index += 1
        elif program[index] == "[":
            close = program.find("]", index + 2)
            index = len(program) if close < 0 else close
        index += 1
    return index + 1


# ------------------------------------------------------------------- vim/ex

EX_RANGE = re.compile(r"(?:[%.$]|\d+|'[a-zA-Z<>]|[-+]\d*|[,;]|\\[/?&]|/(?:\\.|[^/\\])*/?"
                      r"|\?(?:\\.|[^?\\])*\??)*")
EX_NAME = re.compile(r"[A-Za-z]+(?:3[A-Za-z]*)?")
VIM_FUNCTIONS = re.compile(r"\b(system|systemlist|libcall|libcallnr|job_start|jobstart|"
                           r"term_start|termopen|ch_open|rpcstart|py3eval|pyeval|pyxeval|"
                           r"luaeval|perleval|rubyeval|execute)\s*\(")


def _names(*spec: str) -> frozenset[str]:
    """Every abbreviation vim accepts: ``sh[ell]`` is sh, she, shel, shell."""
    found: set[str] = set()
    for item in spec:
        short, _, rest = item.partition("[")
        rest = rest.rstrip("]")
        found.update(short + rest[:length] for length in range(len(rest) + 1))
    return frozenset(found)


EX_CODE = _names("sh[ell]", "ter[minal]", "py[thon]", "py3", "python3", "pyx", "pythonx",
                 "pyf[ile]", "py3f[ile]", "pyxf[ile]", "pyd[o]", "py3d[o]", "lua", "luaf[ile]",
                 "luad[o]", "pe[rl]", "perld[o]", "rub[y]", "rubyf[ile]", "rubyd[o]", "tc[l]",
                 "tcld[o]", "tclf[ile]", "mz[scheme]", "mzf[ile]", "exe[cute]", "so[urce]",
                 "ru[ntime]", "cal[l]", "mak[e]", "lmak[e]", "gr[ep]", "lgr[ep]", "grepa[dd]",
                 "lgrepa[dd]", "lan[guage]")
EX_READ = _names("r[ead]")
EX_WRITE = _names("w[rite]")
EX_GLOBAL = _names("g[lobal]", "v[global]")
EX_PREFIX = _names("sil[ent]", "uns[ilent]", "noa[utocmd]", "keepj[umps]", "kee[pmarks]",
                   "keepp[atterns]", "keepa[lt]", "loc[kmarks]", "vert[ical]", "tab",
                   "to[pleft]", "bo[tright]", "lefta[bove]", "rightb[elow]", "abo[veleft]",
                   "bel[owright]", "hid[e]", "conf[irm]", "bro[wse]", "verb[ose]",
                   "san[dbox]", "windo", "bufdo", "argdo", "tabdo", "cdo", "cfdo", "ldo",
                   "lfdo", "folddoo[pen]", "folddoc[losed]")
MAX_EX_DEPTH = 4


def ex_commands(text: str, depth: int = 0) -> Reading:
    """Whether vim/ex command text runs a shell or code (``!cmd``, ``%!filter``,
    ``r !cmd``, ``w !cmd``, ``:sh``, ``:py3``, ``system()``, ...), and the literal
    shell commands it runs."""
    runs = bool(VIM_FUNCTIONS.search(text))
    scripts: list[str] = []
    rest = text
    while rest.strip() and depth <= MAX_EX_DEPTH:
        piece = rest.lstrip(" \t:")
        piece = piece[EX_RANGE.match(piece).end():].lstrip()  # type: ignore[union-attr]
        if piece.startswith("!"):
            return True, [*scripts, piece[1:]]  # the shell command takes the rest
        match = EX_NAME.match(piece)
        name, after = (match.group(0), piece[match.end():]) if match else ("", piece)
        eaten = _ex_eats_rest(name, after, depth)
        if eaten is not None:
            found, inner = eaten
            return runs or found, scripts + inner
        runs = runs or name in EX_CODE
        rest = _after_bar(after)
    return runs, scripts


def _ex_eats_rest(name: str, after: str, depth: int) -> Reading | None:
    """The reading of commands that take the rest of the line, else None."""
    if name in EX_READ and after.lstrip().startswith("!"):
        return True, [after.lstrip()[1:]]
    if name in EX_WRITE and after[:1].isspace() and after.lstrip().startswith("!"):
        return True, [after.lstrip()[1:]]
    if name in EX_PREFIX:
        return ex_commands(after.removeprefix("!"), depth + 1)
    if name in EX_GLOBAL:
        body = after.removeprefix("!").lstrip()
        if body:
            end = body.find(body[0], 1)
            return ex_commands(body[end + 1:] if end > 0 else "", depth + 1)
    if name in ("au", "aut", "auto", "autoc", "autocm", "autocmd"):
        words = after.split(None, 2)
        return ex_commands(words[2] if len(words) > 2 else "", depth + 1)
    return None


def _after_bar(text: str) -> str:
    """What follows the first unescaped ``|`` (the next command), or ""."""
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "|":
            return text[index + 1:]
        index += 1
    return ""


# --------------------------------------------------------------------- less


def less_keys(keys: str) -> Reading:
    """Whether the keys of ``less +KEYS`` run a shell (``!cmd``, ``|m cmd``)."""
    for index, char in enumerate(keys):
        if char in "/?&":
            return False, []  # a search or filter pattern takes the rest
        if char == "!":
            return True, [keys[index + 1:]]
        if char == "|":
            return True, [keys[index + 2:]]
    return False, []
