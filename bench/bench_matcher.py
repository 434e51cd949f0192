"""Throughput of the byte-level Matcher: bytes/s of accept_bytes over generated documents
(JSON, C-like source, chess games in PGN movetext), plus a pathological-grammar suite.

    python bench/bench_matcher.py                 # 1 MB per document, best of 3
    python bench/bench_matcher.py --size 200000 --repeat 5 --only json chess

Grammars are written here; documents are generated with a fixed seed and are sentences of them.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

import gbnf_sampler as gs

JSON_GBNF = r"""
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( ws "," ws member )* )? ws "}"
member ::= string ws ":" ws value
array  ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= [ \t\n]*
"""

C_GBNF = r"""
root        ::= ( ws item )* ws
item        ::= function | declaration | comment
comment     ::= "//" [^\n]* "\n" | "/*" ( [^*] | "*"+ [^*/] )* "*"+ "/"
function    ::= type ws1 ident ws "(" ws params? ws ")" ws block
params      ::= param ( ws "," ws param )*
param       ::= type ws1 ident
type        ::= ( "int" | "char" | "void" | "long" | "double" ) ( ws "*" )*
block       ::= "{" ( ws statement )* ws "}"
statement   ::= declaration | "return" ws1 expr ws ";" | "if" ws "(" ws expr ws ")" ws block
              | "while" ws "(" ws expr ws ")" ws block | expr ws ";" | block | comment
declaration ::= type ws1 ident ( ws "=" ws expr )? ws ";"
expr        ::= unary ( ws binop ws unary )*
unary       ::= [-!]* primary
primary     ::= ident ( ws "(" ws args? ws ")" )? | number | string | "(" ws expr ws ")"
args        ::= expr ( ws "," ws expr )*
binop       ::= "+" | "-" | "*" | "/" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||" | "="
ident       ::= [a-zA-Z_] [a-zA-Z0-9_]*
number      ::= [0-9]+
string      ::= "\"" ( [^"\\\n] | "\\" . )* "\""
ws          ::= [ \t\n]*
ws1         ::= [ \t\n]+
"""

CHESS_GBNF = r"""
root       ::= game ( "\n\n" game )* "\n"?
game       ::= move-pair ( " " move-pair )* ( " " result )?
move-pair  ::= num "." " " move ( " " move )?
num        ::= [1-9] [0-9]*
move       ::= ( piece-move | pawn-move | castle ) check?
piece-move ::= [KQRBN] [a-h]? [1-8]? "x"? [a-h] [1-8]
pawn-move  ::= ( [a-h] "x" )? [a-h] [1-8] ( "=" [QRBN] )?
castle     ::= "O-O" "-O"?
check      ::= [+#]
result     ::= "1-0" | "0-1" | "1/2-1/2" | "*"
"""

WORDS = ["alpha", "beta", "gamma", "delta", "été", "日本", "naïve", "x", 'a"b', "tab\tt", "😀"]


def gen_json(size: int, rng: random.Random) -> bytes:
    def value(depth: int) -> object:
        kind = rng.random()
        if depth > 4 or kind < 0.45:
            return rng.choice(
                [rng.randint(-(10**6), 10**6), rng.random() * 1e3, rng.choice(WORDS), True, None]
            )
        if kind < 0.75:
            return {f"{rng.choice(WORDS)}{i}": value(depth + 1) for i in range(rng.randint(0, 6))}
        return [value(depth + 1) for _ in range(rng.randint(0, 6))]

    items: list[object] = []
    total = 0
    while total < size:
        v = value(0)
        items.append(v)
        total += len(json.dumps(v, ensure_ascii=False).encode())
    return json.dumps(items, indent=1, ensure_ascii=False).encode()


def gen_c(size: int, rng: random.Random) -> bytes:
    def ident() -> str:
        return rng.choice(["x", "count", "buf", "i", "n", "value_2", "ptr", "_tmp"])

    def expr(depth: int) -> str:
        if depth > 2 or rng.random() < 0.4:
            return rng.choice([ident(), str(rng.randint(0, 999)), '"s\\n"'])
        if rng.random() < 0.3:
            return f"{ident()}({expr(depth + 1)}, {expr(depth + 1)})"
        op = rng.choice(["+", "-", "*", "==", "<=", "&&", "="])
        return f"({expr(depth + 1)} {op} {expr(depth + 1)})"

    def stmt(depth: int, indent: str) -> str:
        k = rng.random()
        if depth < 2 and k < 0.2:
            body = "".join(stmt(depth + 1, indent + "  ") for _ in range(rng.randint(1, 3)))
            return f"{indent}if ({expr(0)}) {{\n{body}{indent}}}\n"
        if depth < 2 and k < 0.3:
            body = "".join(stmt(depth + 1, indent + "  ") for _ in range(rng.randint(1, 3)))
            return f"{indent}while ({expr(0)}) {{\n{body}{indent}}}\n"
        if k < 0.5:
            return f"{indent}int {ident()} = {expr(0)};\n"
        if k < 0.6:
            return f"{indent}// note: {rng.choice(WORDS)}\n"
        if k < 0.7:
            return f"{indent}return {expr(0)};\n"
        return f"{indent}{expr(0)};\n"

    out: list[str] = []
    total = 0
    while total < size:
        body = "".join(stmt(0, "  ") for _ in range(rng.randint(2, 8)))
        fn = f"/* {rng.choice(WORDS)} */\nint f{len(out)}(int a, char* b) {{\n{body}}}\n\n"
        out.append(fn)
        total += len(fn.encode())
    return "".join(out).encode()


def gen_chess(size: int, rng: random.Random) -> bytes:
    files, ranks = "abcdefgh", "12345678"

    def move() -> str:
        k = rng.random()
        if k < 0.05:
            m = rng.choice(["O-O", "O-O-O"])
        elif k < 0.55:
            m = rng.choice("KQRBN") + rng.choice(["", rng.choice(files)]) + rng.choice(["", "x"])
            m += rng.choice(files) + rng.choice(ranks)
        else:
            m = (rng.choice(files) + "x" if rng.random() < 0.2 else "") + rng.choice(files)
            m += rng.choice(ranks) + ("=Q" if rng.random() < 0.02 else "")
        return m + ("+" if rng.random() < 0.1 else "")

    games: list[str] = []
    total = 0
    while total < size:
        n = rng.randint(20, 80)
        game = " ".join(f"{i}. {move()} {move()}" for i in range(1, n + 1))
        game += " " + rng.choice(["1-0", "0-1", "1/2-1/2", "*"])
        games.append(game)
        total += len(game) + 2
    return ("\n\n".join(games) + "\n").encode()


DOCUMENTS: dict[str, tuple[str, Callable[[int, random.Random], bytes]]] = {
    "json": (JSON_GBNF, gen_json),
    "c": (C_GBNF, gen_c),
    "chess": (CHESS_GBNF, gen_chess),
}


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_document(name: str, size: int, repeat: int, chunk: int) -> None:
    text, gen = DOCUMENTS[name]
    doc = gen(size, random.Random(1234))
    t0 = time.perf_counter()
    grammar = gs.Grammar.from_gbnf(text)
    gs.Matcher(grammar)
    compile_ms = (time.perf_counter() - t0) * 1e3

    def whole() -> None:
        m = gs.Matcher(grammar)
        if not (m.accept_bytes(doc) and m.can_terminate()):
            raise SystemExit(f"{name}: generated document was refused")

    def chunked() -> None:
        m = gs.Matcher(grammar)
        accept = m.accept_bytes
        for i in range(0, len(doc), chunk):
            if not accept(doc[i : i + chunk]):
                raise SystemExit(f"{name}: refused at byte {i}")
        if not m.can_terminate():
            raise SystemExit(f"{name}: the chunked document is not a complete sentence")

    t_whole = best_of(repeat, whole)
    t_chunk = best_of(repeat, chunked)
    mb = len(doc) / 1e6
    print(
        f"{name:<6} {len(doc):>9} B  compile {compile_ms:7.2f} ms  "
        f"one call {mb / t_whole:7.2f} MB/s  {chunk}-byte calls {mb / t_chunk:7.2f} MB/s"
    )


PATHOLOGICAL: list[tuple[str, str, bytes]] = [
    ("(a|a)*", 'root ::= ("a" | "a")*', b"a" * (1 << 20)),
    ("((a)*)*", 'root ::= (("a")*)*', b"a" * (1 << 20)),
    ("x? x500", "root ::= " + "x? " * 500 + '\nx ::= "x"', b"x" * 500),
    ("x{0,100000}", 'root ::= "x"{0,100000}', b"x" * 100000),
    ("right rec", 'root ::= "a" root | ""', b"a" * (1 << 20)),
    ("left rec", 'root ::= root "+" n | n\nn ::= [0-9]+', b"1" + b"+23" * 300000),
    ("S ::= S S", 'root ::= root root | "a"', b"a" * (1 << 20)),
    ("aS|aSS|e", 'root ::= "a" root | "a" root root | ""', b"a" * (1 << 20)),
]


def bench_pathological() -> None:
    for name, text, data in PATHOLOGICAL:
        t0 = time.perf_counter()
        m = gs.Matcher(gs.Grammar.from_gbnf(text))
        try:
            ok = m.accept_bytes(data)
            outcome = f"accepted={ok} state_size={m.state_size}"
        except gs.GrammarTooComplexError as e:
            outcome = f"refused ({e.limit})"
        dt = time.perf_counter() - t0
        print(f"{name:<12} {len(data):>8} B  {dt * 1e3:8.1f} ms  {outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="document size in bytes")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--chunk", type=int, default=4, help="bytes per call in chunked mode")
    parser.add_argument(
        "--only",
        nargs="*",
        default=[*DOCUMENTS, "pathological"],
        choices=[*DOCUMENTS, "pathological"],
    )
    args = parser.parse_args()
    for name in args.only:
        if name == "pathological":
            bench_pathological()
        else:
            bench_document(name, args.size, args.repeat, args.chunk)


if __name__ == "__main__":
    main()
