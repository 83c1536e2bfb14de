"""The default training text, generated: English-like prose from a fixed lexicon and grammar written for
normbench (public domain, nothing copied from anywhere), driven by a 64-bit integer PRNG (splitmix64).

Details: docs/methodology.md, "The corpus"."""

from __future__ import annotations

import hashlib

SEED = 20261130
PARAGRAPHS = 4000  # about 1.3 MB

MASK = (1 << 64) - 1

NOUNS = (
    "river stone garden window morning letter village teacher engine bridge forest harbor market lantern "
    "mountain farmer sailor kettle orchard library candle meadow painter station signal valley ladder "
    "harvest compass doctor bottle island mirror shadow weaver thunder basket pilot castle clock winter "
    "summer traveler merchant student question answer number pattern measure circle corner journey"
).split()
VERBS = (
    "carries follows watches builds finds opens closes keeps turns reads writes counts holds brings "
    "crosses paints gathers measures mends answers remembers leaves reaches pulls lifts"
).split()
ADJECTIVES = (
    "quiet old bright small heavy narrow green cold early patient careful distant golden empty silver "
    "gentle broken hidden simple wooden round steady"
).split()
ADVERBS = "slowly quietly often always carefully again together early soon rarely".split()
PREPOSITIONS = "near under over beside behind across through toward after before".split()
NAMES = "Ada Brann Cleo Dario Edda Fenn Greta Hollis Ines Jory Kesa Lund".split()
CONNECTIVES = ("and then", "but", "because", "while", "so", "until")


class SplitMix64:
    """Steele, Lea & Flood 2014: a 64-bit state advanced by a constant; output is a bijective mix."""

    def __init__(self, seed: int):
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """An integer in [0, n) (modulo bias < n / 2^64, irrelevant for n < 100 and fixed by the hash)."""
        return self.next() % n

    def zipf(self, words) -> str:
        """Word i with weight 1/(i+1) in integer arithmetic: weights W//(i+1) with W = 720720 (lcm 1..16)."""
        weights = [720720 // (i + 1) for i in range(len(words))]
        r = self.below(sum(weights))
        for word, w in zip(words, weights, strict=True):
            if r < w:
                return word
            r -= w
        return words[-1]


def noun_phrase(rng: SplitMix64) -> str:
    if rng.below(5) == 0:
        return rng.zipf(NAMES)
    article = "the" if rng.below(3) else "a"
    adjective = rng.zipf(ADJECTIVES) + " " if rng.below(2) else ""
    phrase = f"{article} {adjective}{rng.zipf(NOUNS)}"
    if rng.below(4) == 0:
        phrase += f" {rng.zipf(PREPOSITIONS)} the {rng.zipf(NOUNS)}"
    return phrase


def clause(rng: SplitMix64) -> str:
    words = [noun_phrase(rng), rng.zipf(VERBS), noun_phrase(rng)]
    if rng.below(3) == 0:
        words.append(rng.zipf(ADVERBS))
    if rng.below(6) == 0:
        words.append(f"{1 + rng.below(12)} times")
    return " ".join(words)


def sentence(rng: SplitMix64) -> str:
    text = clause(rng)
    if rng.below(3) == 0:
        text += f" {CONNECTIVES[rng.below(len(CONNECTIVES))]} {clause(rng)}"
    text = text[0].upper() + text[1:]
    return text + ("?" if rng.below(10) == 0 else ".")


def paragraphs(seed: int = SEED, count: int = PARAGRAPHS) -> list[bytes]:
    """`count` paragraphs of 2-7 sentences, each ending in a blank line, as ASCII bytes."""
    rng = SplitMix64(seed)
    out = []
    for _ in range(count):
        sentences = [sentence(rng) for _ in range(2 + rng.below(6))]
        out.append((" ".join(sentences) + "\n\n").encode("ascii"))
    return out


if __name__ == "__main__":
    blob = b"".join(paragraphs())
    print(hashlib.sha256(blob).hexdigest(), len(blob))
