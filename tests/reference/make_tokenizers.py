#!/usr/bin/env python3
"""Trains the fixture tokenizers of atoll's tokenizer tests with Hugging Face
`tokenizers`, on a fixed, generated multilingual text (deterministic):

  bytelevel_bpe  byte-level BPE as Llama 3: Split(Llama-3 regex, Isolated) +
                 ByteLevel(use_regex=False), ignore_merges, ByteLevel decoder,
                 TemplateProcessing adding <|begin_of_text|>, special tokens
                 <|begin_of_text|> <|end_of_text|> <|im_start|> <|im_end|>,
                 a non-special added token with lstrip/rstrip and a
                 normalized single_word one. Vocabulary 1500.
  spm_bpe        SentencePiece-style BPE as Llama 2 / Mistral: NFKC,
                 Metaspace(prepend_scheme=first, split=False), byte_fallback
                 with the 256 <0xNN> tokens, unk <unk> (fuse_unk), decoders
                 Replace(▁ -> space), ByteFallback, Fuse, Strip(1, 0),
                 TemplateProcessing adding <s>, merges as "a b" strings.
                 Vocabulary 1000.

Three smaller ones cover the other components atoll implements:

  misc_metaspace  NFKD + StripAccents + Lowercase + Replace(regex) normalizers;
                  Split(regex, MergedWithPrevious), Split(string,
                  MergedWithNext, invert), Punctuation(Contiguous),
                  Digits(contiguous), Metaspace(always, split) pre-tokenizers;
                  Metaspace + Replace(regex) + Strip(start 2, per token) decoders;
                  RobertaProcessing; <mask> with lstrip; a normalized added
                  token matched after lowercasing. Vocabulary 600.
  misc_wordpiece_like  BPE with continuing_subword_prefix "##" and [UNK]
                  (alphabet limited), NFC + Strip + Prepend normalizers,
                  Whitespace + CharDelimiterSplit pre-tokenizers, no decoder
                  (tokens joined by spaces), BertProcessing. Vocabulary 500.
  misc_bytelevel  Lowercase; Digits(individual) then ByteLevel(add_prefix_space=True)
                  with its GPT-2 regex; ByteLevel decoder and post-processor.
                  Vocabulary 700.

Usage: python make_tokenizers.py [OUT_DIR]   (default: tests/reference/tokenizers)
"""
import collections
import json
import os
import random
import sys
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = ("the of and to in is was for that with as on by it at from this be are or an which not his "
         "have but they were had her one all their there been has more when will would who its into "
         "time only first new some could these two may after other people over such most also than "
         "then through where much before years world between city under model token text language "
         "number system program value function return memory data string file error write read "
         "great little right thought small large every found still should because between never "
         "house water place night sound light world school story family question government").split()

SENTENCES_ZH = ["我们今天去公园散步。", "这个模型可以处理中文文本。", "天气很好，阳光明媚。", "机器学习是人工智能的一个分支。",
                "请把文件保存到服务器上。"]
SENTENCES_JA = ["今日はとても良い天気ですね。", "東京タワーに行きました。", "日本語のテキストを処理します。", "カタカナとひらがな"]
SENTENCES_KO = ["안녕하세요, 만나서 반갑습니다.", "오늘 날씨가 좋네요.", "한국어 문장을 처리합니다."]
CODE = [
    "int main(int argc, char **argv) {\n    printf(\"hello %d\\n\", argc);\n    return 0;\n}\n",
    "def tokenize(text):\n    return [t for t in text.split() if t]\n\nclass Model:\n    pass\n",
    "{\"name\": \"atoll\", \"version\": [0, 1, 0], \"tags\": [\"llm\", \"c11\"]}\n",
    "for (size_t i = 0; i < n; i++) {\n\tsum += a[i] * b[i];\n}\n",
    "if x == None:\n    raise ValueError('x must not be None')\n",
]


def training_text(seed=1234, n=6000):
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        kind = rng.random()
        if kind < 0.6:
            words = [rng.choice(WORDS) for _ in range(rng.randint(4, 18))]
            if rng.random() < 0.3:
                words[0] = words[0].capitalize()
            if rng.random() < 0.2:
                words.insert(rng.randrange(len(words)), str(rng.randint(0, 100000)))
            if rng.random() < 0.15:
                words.insert(rng.randrange(len(words)), rng.choice(["don't", "it's", "we're", "I'll", "they've"]))
            lines.append(" ".join(words) + rng.choice([".", ",", "!", "?", ":", ""]))
        elif kind < 0.72:
            lines.append(rng.choice(SENTENCES_ZH))
        elif kind < 0.8:
            lines.append(rng.choice(SENTENCES_JA))
        elif kind < 0.86:
            lines.append(rng.choice(SENTENCES_KO))
        elif kind < 0.96:
            lines.append(rng.choice(CODE))
        else:
            lines.append("%d.%d %s" % (rng.randint(0, 9999), rng.randint(0, 99), rng.choice(["€", "%", "$", "°C", "km/h"])))
    return lines


def chunks(lines, size=50):
    for i in range(0, len(lines), size):
        yield "\n".join(lines[i:i + size])


def make_bytelevel(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=1500, min_frequency=2, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(chunks(lines), trainer)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    tok.add_tokens([AddedToken("<tool_call>", lstrip=True, rstrip=True, special=False, normalized=False),
                    AddedToken("[[sep]]", single_word=True, special=False, normalized=True)])
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = True
    return data


def make_spm(lines):
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    # The 150 most frequent characters (ties by code point: the trainer's
    # own limit_alphabet breaks ties in hash order) form the alphabet; the
    # others are left to byte fallback.
    counts = collections.Counter(unicodedata.normalize("NFKC", "\n".join(lines)).replace(" ", "▁"))
    counts["▁"] += len(lines)
    alphabet = sorted(sorted(counts), key=lambda c: -counts[c])[:150]
    trainer = trainers.BpeTrainer(vocab_size=1000, min_frequency=2, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
                                  initial_alphabet=alphabet, limit_alphabet=len(alphabet), show_progress=False)
    tok.train_from_iterator(chunks(lines), trainer)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B:1",
                                                       special_tokens=[("<s>", tok.token_to_id("<s>"))])
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    data = json.loads(tok.to_str())
    # As in Llama's tokenizer.json: the byte tokens are plain vocabulary
    # entries, not added tokens; the whole text is one BPE word.
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in byte_tokens]
    data["pre_tokenizer"]["split"] = False
    # Merges in the older "a b" string form (the others use [a, b] pairs).
    data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
    return data


def make_misc_metaspace(lines):
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(),
                                           normalizers.Replace(Regex(r"\d{6,}"), "#")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"[,;]"), behavior="merged_with_previous"),
        pre_tokenizers.Split("--", behavior="merged_with_next", invert=True),
        pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True),
    ])
    alphabet = list("abcdefghijklmnopqrstuvwxyz0123456789▁.,;:!?'\"()-#")
    trainer = trainers.BpeTrainer(vocab_size=600, min_frequency=2, special_tokens=["<unk>", "<s>", "</s>", "<mask>"],
                                  initial_alphabet=alphabet, limit_alphabet=len(alphabet), show_progress=False)
    tok.train_from_iterator(chunks(lines), trainer)
    # (A Strip with stop > 0 makes tokenizers panic on an empty token.)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="always"),
                                     decoders.Replace(Regex(" {2,}"), " "), decoders.Strip(" ", 2, 0)])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("hello world", special=False, normalized=True)])
    return json.loads(tok.to_str())


def train_prefixed_bpe(words, alphabet, prefix, n_merges):
    """A small deterministic BPE trainer for a model with a
    continuing_subword_prefix (tokenizers' trainer orders the prefixed
    alphabet in hash order, so its output changes from run to run)."""
    counts = collections.Counter(w for w in words if all(c in alphabet for c in w))
    split = {w: [w[0]] + [prefix + c for c in w[1:]] for w in counts}
    vocab = {}
    for c in sorted(alphabet):
        vocab.setdefault(c, len(vocab))
    for c in sorted(alphabet):
        vocab.setdefault(prefix + c, len(vocab))
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, syms in split.items():
            for a, b in zip(syms, syms[1:]):
                pairs[(a, b)] += counts[w]
        if not pairs:
            break
        (a, b), n = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if n < 2:
            break
        new = a + b[len(prefix):]
        merges.append((a, b))
        vocab.setdefault(new, len(vocab))
        for w, syms in split.items():
            i, out = 0, []
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            split[w] = out
    return vocab, merges


def make_misc_wordpiece_like(lines):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()[]{}<>=+-*/_#%&|\\"
    ws = pre_tokenizers.Whitespace()
    words = [w for line in lines for w, _ in ws.pre_tokenize_str(line)]
    specials = ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab, merges = train_prefixed_bpe(words, alphabet, "##", 300)
    vocab = {**{t: i for i, t in enumerate(specials)}, **{t: i + len(specials) for t, i in vocab.items()}}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="[UNK]", continuing_subword_prefix="##", fuse_unk=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Strip(left=True, right=True),
                                           normalizers.Prepend("@")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.CharDelimiterSplit("@")])
    tok.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials[:3]])
    tok.add_special_tokens([AddedToken("[MASK]", single_word=True, special=True, normalized=False)])
    return json.loads(tok.to_str())


def make_misc_bytelevel(lines):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)])
    trainer = trainers.BpeTrainer(vocab_size=700, min_frequency=2, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(chunks(lines), trainer)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return json.loads(tok.to_str())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers")
    lines = training_text()
    for name, data in (("bytelevel_bpe", make_bytelevel(lines)), ("spm_bpe", make_spm(lines)),
                       ("misc_metaspace", make_misc_metaspace(lines)),
                       ("misc_wordpiece_like", make_misc_wordpiece_like(lines)),
                       ("misc_bytelevel", make_misc_bytelevel(lines))):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
        Tokenizer.from_file(path)  # must load back
        print("%s: vocab %d, %d bytes" % (path, Tokenizer.from_file(path).get_vocab_size(), os.path.getsize(path)))


if __name__ == "__main__":
    main()
