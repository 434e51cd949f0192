"""Before/after examples of the doctor's warnings on the embedded model (Gemma 3 270M, greedy).

    python bench/doctor_examples.py [--write docs/notes/doctor.md]

For each warning: a grammar with the hazard, the doctor's finding, the model's output under it,
and the output once the fix is made (gs.llama.generate, temperature 0, so the run repeats).
The llama.cpp dialect example runs llama.cpp's own grammar sampler (llama-cpp-python's
``grammar=``) before and after the rewrite. Gemma 3's vocabulary has a token for every byte, so
no literal is unspellable with it: that example uses llama.cpp's bert-bge vocabulary and shows
the doctor's output only. With ``--write`` the markdown replaces the part of the file between
``<!-- examples:begin -->`` and ``<!-- examples:end -->``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.doctor import diagnose, diagnose_schema
from gbnf_sampler.doctor.dialect import to_llama_cpp
from gbnf_sampler.llama import vocab_for
from gbnf_sampler.llama.generate import GenerationError, generate
from gbnf_sampler.llama.models import load_llama

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py

BEGIN, END = "<!-- examples:begin -->", "<!-- examples:end -->"


@dataclass
class Example:
    code: str
    story: str
    prompt: str
    before: Any  # GBNF text, or a JSON Schema dict
    after: Any
    max_tokens: int = 48
    bounded: int | None = None  # also run `before` compiled with max_whitespace=bounded


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
    },
    "required": ["name", "age"],
}

EXAMPLES = [
    Example(
        "empty_output",
        "The list rule allows zero numbers, so end-of-sequence is allowed at once, and the model "
        "(which would rather not start with a parenthesis) takes it.",
        "Extract the phone numbers from: call me at 555-1234 or 555-9876.\nNumbers:",
        'root ::= num*\nnum ::= "(" [0-9]{3} ") " [0-9]{3} "-" [0-9]{4} "\\n"\n',
        'root ::= num+\nnum ::= "(" [0-9]{3} ") " [0-9]{3} "-" [0-9]{4} "\\n"\n',
    ),
    Example(
        "unbounded_filler",
        "Whitespace allowed without bound after the answer: the model keeps writing newlines.",
        "Question: Is the sky blue? Answer yes or no.\nAnswer:",
        'root ::= ws ("yes" | "no") ws\nws ::= [ \\t\\n]*\n',
        'root ::= ws ("yes" | "no") ws\nws ::= [ \\t\\n]{0,8}\n',
        max_tokens=64,
        bounded=4,
    ),
    Example(
        "endless_extras",
        "The object allows any extra property (the JSON Schema default).",
        "Alice is 30 years old and lives in Paris. As JSON: ",
        PERSON,
        {**PERSON, "additionalProperties": False},
        max_tokens=64,
    ),
    Example(
        "ambiguous_growth",
        'expr ::= expr "+" expr has many parses of every sum: each step costs more.',
        "Add these numbers: 1+2+3+4+5+6+7+8+9+10+11+12+13+14+15+16+17+18+19+20 = 1+2+3+",
        'root ::= expr\nexpr ::= expr "+" expr | num\nnum ::= [0-9]+\n',
        'root ::= expr\nexpr ::= num ("+" num)*\nnum ::= [0-9]+\n',
        max_tokens=96,
    ),
    Example(
        "unused_rule",
        "The yes/no rule is defined but never used: any word passes.",
        "Question: Is water wet? Answer yes or no.\nAnswer: ",
        'root ::= word\nword ::= [a-z]+\nanswer ::= "yes" | "no"\n',
        'root ::= answer\nanswer ::= "yes" | "no"\n',
        max_tokens=16,
    ),
    Example(
        "shadowed_alternative",
        'The class already covers "yes" and "no": they add nothing (GBNF is not a PEG), so the '
        "yes/no the author meant never takes priority. The doctor's fix (remove them) keeps the "
        "same language; the one the author needs here is the other way round: drop the class.",
        "Question: Is water wet? Answer yes or no.\nAnswer: ",
        'root ::= [a-z]+ | "yes" | "no"\n',
        'root ::= "yes" | "no"\n',
        max_tokens=16,
    ),
]

LLAMA_CPP = Example(
    "llama_cpp",
    "A rule name with '_' and a {,n} bound: stock llama.cpp refuses the grammar.",
    "List some colors: ",
    'root ::= color_name ("," " "? color_name){,3}\ncolor_name ::= [a-z]+\n',
    None,
)


def _run(llm: Any, prompt: str, grammar: Any, max_tokens: int) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        out = generate(llm, prompt, grammar, max_tokens=max_tokens)
    except GenerationError as e:
        return {"text": f"(error: {e})", "tokens": 0, "finish": "error", "seconds": 0.0}
    seconds = time.perf_counter() - start
    choice = out["choices"][0]
    return {
        "text": choice["text"],
        "tokens": int(out["usage"]["completion_tokens"]),
        "finish": choice["finish_reason"],
        "seconds": seconds,
    }


def _grammar(spec: Any) -> gs.Grammar:
    if isinstance(spec, dict):
        return gs.Grammar.from_json_schema(spec, whitespace="compact")
    return gs.Grammar.from_gbnf(spec)


def _finding(example: Example) -> str:
    if isinstance(example.before, dict):
        found = diagnose_schema(example.before).findings
    else:
        found = diagnose(example.before).findings
    matches = [f for f in found if f.code == example.code]
    return matches[0].rendered if matches else "(no finding)"


def _block(text: str) -> str:
    return "```\n" + text.rstrip("\n") + "\n```"


def _shown(run: dict[str, Any]) -> str:
    text = run["text"]
    return (
        f"{text!r}\n({run['tokens']} tokens, finish: {run['finish']}, {run['seconds']:.2f} s, "
        f"{run['tokens'] / run['seconds'] if run['seconds'] else 0:.1f} tokens/s)"
    )


def _spec(spec: Any) -> str:
    import json

    return json.dumps(spec) if isinstance(spec, dict) else str(spec)


def _bounded_markdown(llm: Any, example: Example) -> list[str]:
    if example.bounded is None:
        return []
    compiled = gs.compile(_grammar(example.before), vocab_for(llm), max_whitespace=example.bounded)
    run = _run(llm, example.prompt, compiled, example.max_tokens)
    return [
        f"Or the first grammar unchanged, compiled with `max_whitespace={example.bounded}`:",
        _block(_shown(run)),
    ]


def example_markdown(llm: Any, example: Example) -> str:
    before = _run(llm, example.prompt, _grammar(example.before), example.max_tokens)
    after = _run(llm, example.prompt, _grammar(example.after), example.max_tokens)
    return "\n".join(
        [
            f"### `{example.code}`",
            "",
            example.story,
            "",
            "Prompt: " + repr(example.prompt),
            "",
            "Before:",
            _block(_spec(example.before)),
            _block(_finding(example)),
            "Output:",
            _block(_shown(before)),
            "After the fix:",
            _block(_spec(example.after)),
            "Output:",
            _block(_shown(after)),
            *_bounded_markdown(llm, example),
            "",
        ]
    )


def llama_cpp_markdown(llm: Any) -> str:
    import llama_cpp

    text = LLAMA_CPP.before
    rewritten = to_llama_cpp(text)
    findings = [f.rendered for f in diagnose(text, dialect="llama.cpp").findings]

    def run(grammar_text: str) -> str:
        # Asked first through the low-level call: llama-cpp-python 0.3.36 hands a refused
        # grammar's NULL sampler on when given grammar= (the process crashed in our runs).
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar_text.encode(), b"root")
        if not sampler:
            return "(llama.cpp refuses the grammar: llama_sampler_init_grammar returns NULL)"
        llama_cpp.llama_sampler_free(sampler)
        grammar = llama_cpp.LlamaGrammar.from_string(grammar_text, verbose=False)
        out = llm.create_completion(
            LLAMA_CPP.prompt, grammar=grammar, max_tokens=24, temperature=0.0, seed=0
        )
        return repr(out["choices"][0]["text"])

    return "\n".join(
        [
            "### `llama_cpp` (`--dialect llama.cpp`)",
            "",
            LLAMA_CPP.story + " Run with llama.cpp's own grammar sampler.",
            "",
            _block(text),
            _block("\n".join(findings)),
            "llama.cpp:",
            _block(run(text)),
            "After `gbnf-sampler check --dialect llama.cpp --rewrite`:",
            _block(rewritten),
            "llama.cpp:",
            _block(run(rewritten)),
            "",
        ]
    )


def vocab_markdown() -> str:
    from assets import require, vocab_gguf

    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("bert-bge")))
    before = 'root ::= "ok " mood\nmood ::= "\U0001f600" | "fine"\n'
    after = 'root ::= "ok " mood\nmood ::= "fine"\n'
    found = [f.rendered for f in diagnose(before, vocab=vocab).findings]
    still = [f.rendered for f in diagnose(after, vocab=vocab).findings]
    first = 'root ::= "Hello"\n'
    no_start = [f.rendered for f in diagnose(first, vocab=vocab).findings if f.code == "no_start"]
    return "\n".join(
        [
            "### `unspellable`, `no_start` (`--vocab`)",
            "",
            "Gemma 3 has a token for every byte, so it can write any text: these need a "
            "vocabulary without byte fallback, here llama.cpp's bert-bge (WordPiece, uncased). "
            "No model output: there is no model with that vocabulary here.",
            "",
            _block(before),
            _block("\n".join(found)),
            "After the fix:",
            _block(after),
            _block("\n".join(still) or "(no findings)"),
            _block(first),
            _block("\n".join(no_start)),
            "",
        ]
    )


def render(llm: Any) -> str:
    parts = [
        "Generated by `python bench/doctor_examples.py --write docs/notes/doctor.md` on the "
        "embedded Gemma 3 270M (Q4_K_M), greedy decoding.",
        "",
    ]
    parts += [example_markdown(llm, e) for e in EXAMPLES]
    parts.append(llama_cpp_markdown(llm))
    parts.append(vocab_markdown())
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="markdown file with the examples markers")
    args = parser.parse_args(argv)
    llm = load_llama(None, progress=False)
    text = render(llm)
    if args.write is None:
        print(text)
        return 0
    page = args.write.read_text(encoding="utf-8")
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    args.write.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
