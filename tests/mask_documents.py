"""Documents for replay tests and the mask benchmark: (name, grammar GBNF text, document text).
Grammars are written here or taken from llama.cpp's examples (``llama_cpp_grammars()``); every
document is a sentence of its grammar."""

from __future__ import annotations

from pathlib import Path

JSON_DOC = """{
  "id": 1234, "name": "Ada Lovelace", "email": "ada@example.org",
  "tags": ["math", "poetry", "engines"], "active": true, "score": -12.5e3,
  "address": {"street": "12 St James's Sq", "city": "London", "zip": null},
  "notes": "She wrote \\"notes\\" on the Analytical Engine\\u2014and caf\\u00e9 \u00e9t\u00e9.",
  "history": [{"year": 1843, "event": "Translation of Menabrea"}, {"year": 1852, "event": "d"}]
}"""

SCHEMA_GBNF = r"""root ::= "{" ws "\"name\":" ws string "," ws "\"age\":" ws integer "," ws rest
rest ::= "\"email\":" ws string "," ws "\"tags\":" ws tags "," ws "\"address\":" ws address ws "}"
address ::= "{" ws "\"street\":" ws string "," ws "\"city\":" ws string zip? ws "}"
zip ::= "," ws "\"zip\":" ws (string | "null")
tags ::= "[" ws ( string ( "," ws string )* )? ws "]"
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
ws ::= [ \t\n]{0,20}
"""

SCHEMA_DOC = """{
  "name": "Grace Hopper", "age": 85, "email": "grace@navy.mil",
  "tags": ["cobol", "compilers", "nanoseconds"],
  "address": {"street": "1 Bug Lane", "city": "Arlington", "zip": "22201"}
}"""

C_DOC = (
    "int main(){int x = 10;while(x>0){// count down\n"
    "x = x-1;}if(x==0){return 1;}else{return 0;}}"
    "float scale(int y){int z = y*2+offset(y, 3);/* twice, plus an offset */return z;}"
    "char pick(int k){for(int i = 0; i<k; i = i+1){k = k-i;}return k;}"
)

CHESS_DOC = (
    "1. e4 e5\n2. Nf3 Nc6\n3. Bb5 a6\n4. Ba4 Nf6\n5. O-O Be7\n6. Re1 b5\n7. Bb3 d6\n"
    "8. c3 O-O\n9. h3 Nb8\n10. d4 Nbd7\n11. c4 c6\n12. cxb5 axb5\n13. Nc3 Bb7\n"
)

ARITHMETIC_DOC = "a +3*(b -c)= 7\nx1 = (y/2)\n"


def documents(grammars_dir: Path | None) -> list[tuple[str, str, str]]:
    """(name, grammar, document); llama.cpp's grammars only when ``grammars_dir`` is given."""
    out = [("schema", SCHEMA_GBNF, SCHEMA_DOC)]
    if grammars_dir is not None:
        for name, doc in (
            ("json", JSON_DOC),
            ("c", C_DOC),
            ("chess", CHESS_DOC),
            ("arithmetic", ARITHMETIC_DOC),
        ):
            out.append((name, (grammars_dir / f"{name}.gbnf").read_text(), doc))
    return out
