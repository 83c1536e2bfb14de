"""A generated Python-like source corpus (`data = "code"`): modules of functions, classes, comments,
docstrings and data tables from a seeded splitmix64 stream, integer arithmetic and ASCII/UTF-8 literals
only, so the bytes are the same on every Python >= 3.11 and platform (pinned by SHA-256 in corpus.py). It
stands in for this Python's stdlib source, which differs per Python version, where the claims need varied
text: lines of many lengths and kinds, modules of different styles. Written for normbench (nothing copied).

Details: docs/methodology.md, "The corpus: generated, byte-identical everywhere"."""

from __future__ import annotations

try:
    from normbench.data.textgen import ADJECTIVES, NOUNS, VERBS, SplitMix64, sentence
except ImportError:  # run on its own, `python normbench/data/codegen.py`: textgen.py sits beside it
    from textgen import ADJECTIVES, NOUNS, VERBS, SplitMix64, sentence

SEED = 20261205
MODULES = 200  # about 2.8 MB, each module one part (every 10th held out, as the stdlib's files)

WORDS = (
    "value index count items name path data result node key buffer offset size token parser state config "
    "handler cache stream record field entry header block width depth limit flag mode level source target "
    "line column window frame message error option args kwargs context queue timer event reader writer "
    "table row cell chunk part group label tag text code unit scale weight"
).split()
ACTIONS = (
    "get set read write parse load make build check find update reset open close format split join apply "
    "merge render encode decode resolve fetch store scan emit collect normalize validate convert"
).split()
MODULES_IMPORTED = "os sys re io json math time struct typing functools itertools collections".split()
EXCEPTIONS = "ValueError TypeError KeyError IndexError RuntimeError OSError LookupError".split()
BUILTINS = "len range min max sum sorted list dict tuple int str isinstance enumerate zip".split()
UNICODE = ("naïve", "café", "µs", "→", "Ω", "über", "déjà", "±", "°C", "≤")  # rare non-ASCII, as in real code
OPS = ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^")
COMPARE = ("==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in")


class Writer:
    """One module's lines, with its style: indentation unit, comment and docstring density, line width."""

    def __init__(self, rng: SplitMix64):
        self.rng = rng
        self.lines: list[str] = []
        self.indent = "    " if rng.below(8) else "  "
        self.comment_every = 2 + rng.below(12)  # a comment before 1 in k statements
        self.doc_sentences = rng.below(6)  # 0: terse modules with one-line docstrings
        self.width = 60 + rng.below(40)  # where prose wraps
        self.unicode = rng.below(4) == 0
        self.local = [name(rng) for _ in range(6 + rng.below(30))]  # the names this module keeps reusing
        self.kinds = [1 + rng.below(9) for _ in range(4)]  # weights: functions, classes, tables, comments
        self.column = (0, 0, 12, 16, 24)[rng.below(5)]  # tables in aligned columns of this width (0: not)

    def add(self, depth: int, text: str, wrap: bool = True) -> None:
        """One line; a long call is broken after its commas, continuations aligned under its "(" (PEP 8)."""
        line = self.indent * depth + text if text else ""
        if not wrap or len(line) <= self.width + 10 or "(" not in line:
            self.lines.append(line)
            return
        col = line.index("(") + 1
        pieces = line[col:].split(", ")
        out = line[:col] + pieces[0]
        for piece in pieces[1:]:
            if len(out) + 2 + len(piece) > self.width + 10:
                self.lines.append(out + ",")
                out = " " * col + piece
            else:
                out += ", " + piece
        self.lines.append(out)

    def prose(self, depth: int, prefix: str, sentences: int) -> None:
        words = " ".join(sentence(self.rng) for _ in range(max(1, sentences))).split()
        if self.unicode and self.rng.below(3) == 0:
            words.insert(self.rng.below(len(words)), UNICODE[self.rng.below(len(UNICODE))])
        line = ""
        for word in words:
            if line and len(line) + 1 + len(word) > self.width - len(self.indent) * depth:
                self.add(depth, prefix + line, wrap=False)
                line = word
            else:
                line = f"{line} {word}" if line else word
        self.add(depth, prefix + line, wrap=False)


def name(rng: SplitMix64, parts: int = 0) -> str:
    words = []
    for _ in range(parts or 1 + rng.below(3)):
        pool = (WORDS, ACTIONS, NOUNS)[rng.below(3)]
        words.append(pool[rng.below(len(pool))])
    return "_".join(words)


def class_name(rng: SplitMix64) -> str:
    return "".join(w.capitalize() for w in name(rng, 1 + rng.below(2)).split("_"))


def number(rng: SplitMix64) -> str:
    kind = rng.below(6)
    if kind == 0:
        return hex(rng.below(1 << (4 * (1 + rng.below(8)))))
    if kind == 1:
        return f"{rng.below(1000)}.{rng.below(100):02d}"
    return str(rng.below(10 ** (1 + rng.below(5))))


def string(w: Writer) -> str:
    rng = w.rng
    words = [ADJECTIVES[rng.below(len(ADJECTIVES))], WORDS[rng.below(len(WORDS))]]
    if rng.below(3) == 0:
        words.append(VERBS[rng.below(len(VERBS))])
    if w.unicode and rng.below(5) == 0:
        words.append(UNICODE[rng.below(len(UNICODE))])
    quote = '"' if rng.below(3) else "'"
    return f"{quote}{' '.join(words)}{quote}"


def atom(w: Writer) -> str:
    k = w.rng.below(7)
    if k < 3:
        return w.rng.zipf(w.local) if w.rng.below(3) else name(w.rng)
    if k == 3:
        return number(w.rng)
    if k == 4:
        return string(w)
    if k == 5:
        return f"self.{name(w.rng)}"
    return f"{name(w.rng, 1)}[{atom(w) if w.rng.below(2) else number(w.rng)}]"


def expr(w: Writer, depth: int = 0) -> str:
    rng = w.rng
    k = rng.below(6) if depth < 2 else 0
    if k <= 1:
        return atom(w)
    if k == 2:
        return f"{expr(w, depth + 1)} {OPS[rng.below(len(OPS))]} {expr(w, depth + 1)}"
    if k == 3:
        fn = BUILTINS[rng.below(len(BUILTINS))] if rng.below(2) else f"{name(rng)}"
        return f"{fn}({', '.join(expr(w, depth + 1) for _ in range(rng.below(4)))})"
    if k == 4:
        return f"{atom(w)}.{ACTIONS[rng.below(len(ACTIONS))]}({expr(w, depth + 1)})"
    return f"[{expr(w, depth + 1)} for {name(rng, 1)} in {atom(w)}]"


def condition(w: Writer) -> str:
    return f"{atom(w)} {COMPARE[w.rng.below(len(COMPARE))]} {expr(w, 1)}"


def statement(w: Writer, depth: int, budget: int) -> int:
    """One statement (a block when the budget allows) at `depth`; returns the lines it used."""
    rng, start = w.rng, len(w.lines)
    if rng.below(w.comment_every) == 0:
        w.prose(depth, "# ", 1)
    k = rng.below(12) if budget > 2 and depth < 5 else rng.below(6)
    if k <= 2:
        w.add(depth, f"{name(rng)} = {expr(w)}")
    elif k == 3:
        w.add(depth, f"{atom(w)} {OPS[rng.below(4)]}= {expr(w, 1)}")
    elif k == 4:
        w.add(depth, f"{atom(w)}.{ACTIONS[rng.below(len(ACTIONS))]}({expr(w, 1)})")
    elif k == 5:
        w.add(depth, ("return " + expr(w)) if rng.below(3) else ("continue", "break", "pass")[rng.below(3)])
    elif k <= 7:
        w.add(depth, f"if {condition(w)}:")
        block(w, depth + 1, budget // 2)
        if rng.below(2):
            w.add(depth, "else:")
            block(w, depth + 1, budget // 3)
    elif k == 8:
        w.add(depth, f"for {name(rng, 1)} in {expr(w, 1)}:")
        block(w, depth + 1, budget // 2)
    elif k == 9:
        w.add(depth, "try:")
        block(w, depth + 1, budget // 3)
        w.add(depth, f"except {EXCEPTIONS[rng.below(len(EXCEPTIONS))]} as exc:")
        w.add(
            depth + 1,
            f'raise {EXCEPTIONS[rng.below(len(EXCEPTIONS))]}(f"cannot {ACTIONS[rng.below(len(ACTIONS))]} {{exc}}")',
        )
    elif k == 10:
        w.add(depth, f"while {condition(w)}:")
        block(w, depth + 1, budget // 3)
    else:
        w.add(depth, f"with {name(rng, 1)}({string(w)}) as {name(rng, 1)}:")
        block(w, depth + 1, budget // 3)
    return len(w.lines) - start


def block(w: Writer, depth: int, budget: int) -> None:
    used, target = 0, 1 + w.rng.below(max(1, budget))
    while used < target:
        used += statement(w, depth, budget - used)


def docstring(w: Writer, depth: int) -> None:
    if w.doc_sentences == 0 or w.rng.below(3) == 0:
        w.add(depth, f'"""{sentence(w.rng)}"""')
        return
    w.add(depth, f'"""{sentence(w.rng)}')
    w.add(0, "")
    w.prose(depth, "", 1 + w.rng.below(w.doc_sentences + 1))
    w.add(depth, '"""')


def function(w: Writer, depth: int) -> None:
    rng = w.rng
    args = [
        name(rng, 1) + (f": {('int', 'str', 'float', 'list', 'dict')[rng.below(5)]}" if rng.below(2) else "")
        for _ in range(rng.below(5))
    ]
    head = ["self"] if depth else []
    w.add(depth, f"def {ACTIONS[rng.below(len(ACTIONS))]}_{name(rng)}({', '.join(head + args)}):")
    if rng.below(4):
        docstring(w, depth + 1)
    block(w, depth + 1, 3 + rng.below(14))
    w.add(0, "")


def table(w: Writer) -> None:
    rng = w.rng
    w.add(0, f"{name(rng).upper()} = (")
    width = 1 + rng.below(6)
    for _ in range(3 + rng.below(30)):
        cells = [number(rng) if rng.below(3) else string(w) for _ in range(width)]
        row = (
            " ".join(f"{c},".ljust(w.column) for c in cells).rstrip().rstrip(",")
            if w.column
            else ", ".join(cells)
        )
        w.add(1, f"({row}),")
    w.add(0, ")")
    w.add(0, "")


def module(rng: SplitMix64) -> bytes:
    w = Writer(rng)
    docstring(w, 0)
    w.add(0, "")
    for m in sorted({MODULES_IMPORTED[rng.below(len(MODULES_IMPORTED))] for _ in range(1 + rng.below(5))}):
        w.add(0, f"import {m}")
    w.add(0, "")
    for _ in range(4 + rng.below(24)):
        k, total = rng.below(sum(w.kinds)), 0
        kind = next(i for i, weight in enumerate(w.kinds) if k < (total := total + weight))
        if kind == 0:
            function(w, 0)
        elif kind == 1:
            w.add(0, f"class {class_name(rng)}({class_name(rng) if rng.below(2) else 'object'}):")
            docstring(w, 1)
            for _ in range(1 + rng.below(5)):
                function(w, 1)
        elif kind == 2:
            table(w)
        else:
            w.prose(0, "# ", 1 + rng.below(4))
            w.add(0, f"{name(rng).upper()} = {expr(w)}")
            w.add(0, "")
    return ("\n".join(w.lines) + "\n").encode("utf-8")


def modules(seed: int = SEED, count: int = MODULES) -> list[bytes]:
    """`count` generated modules, each the UTF-8 bytes of one file."""
    rng = SplitMix64(seed)
    return [module(rng) for _ in range(count)]


if __name__ == "__main__":
    import hashlib

    blob = b"".join(modules())
    print(hashlib.sha256(blob).hexdigest(), len(blob))
