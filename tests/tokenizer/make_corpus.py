#!/usr/bin/env python3
"""Writes corpus.jsonl, the fixed strings of the tokenizer parity tests
(one {"text": ...} per line): hand-picked cases (special tokens in text,
whitespace, combining characters, emoji sequences, Unicode edge cases) and
deterministic generated ones (English, CJK, code, numbers, mixed scripts,
every single ASCII character). Run: python make_corpus.py [OUT]"""
import json
import os
import random
import sys

rng = random.Random(20240601)
out = []

# --- hand-picked
out += [
    "", " ", "  ", "\n", "\t", "\r\n", "a", "Hello world", "Hello, world!", " Hello world", "Hello world ",
    "<|im_start|>user\nhi<|im_end|>", "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n",
    "<|begin_of_text|>Hello", "Hello<|end_of_text|>", "<|im_start|><|im_end|>", "<|im_start|> <|im_end|>",
    " <|im_start|> ", "<|im_start|>\n\n<|im_end|>", "x<|im_end|>y", "<<|im_end|>>", "<|im_st", "|im_end|>",
    "<s>hello</s>", "<s> hello</s>", "</s><s>", "<unk>", "a <unk> b", "<0x41><0xE4>", "<0x0A>",
    "call <tool_call> now", "call<tool_call>now", "  <tool_call>  ", "<tool_call>\n\n", "\t<tool_call>\t",
    "[[sep]]", "a [[sep]] b", "a[[sep]]b", "[[sep]][[sep]]", "x [[sep]]y", "é[[sep]]", "1 [[sep]] 2",
    "<|im_start|>user\n<tool_call> {\"name\": \"f\"} <tool_call><|im_end|>",
    "don't", "DON'T", "I'M", "we'Re", "it's'", "'s", "'''", "’s", "ſ", "'ſ", "x'LL", "you've 've",
    "   leading spaces", "trailing spaces   ", "a    b", "a \t b", "a\n\nb", "a\n \nb", "a \n b", " \n ",
    "\n\n\n\n", "\t\t\t", "\r\n\r\n", "line1\r\nline2\r\n", "a\rb", "\u00a0", "a\u00a0b", "\u3000全角スペース",
    "\u2028", "x\u2029y", "\u0085", "a\u0085b", "\u180e", "a\u180eb", "\u200b", "zero\u200bwidth", "\u200d",
    "\ufeffBOM", "\x00", "a\x00b", "\x1b[31mred\x1b[0m", "\x7f", "\x1c\x1d\x1e\x1f",
    "e\u0301", "é", "n\u0303o", "A\u030a", "\u212b", "\u2126", "ﬁ", "ﬃ", "①②③", "ＡＢＣ１２３", "ｶﾀｶﾅ", "ﾊﾟ",
    "㍿", "㈱", "¼ ½ ¾", "x²", "H₂O", "™", "…", "\u1100\u1161\u11a8", "각", "\u0915\u093c", "ạ̈", "q\u0307\u0323",
    "a\u0301\u0316\u0300", "\u0344", "\u0958", "Å", "ǅ", "ﷺ", "\U0001d400\U0001d401", "𝟘𝟙𝟚",
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇯🇵🇺🇸", "🧑🏿‍💻", "❤️", "☺︎", "#️⃣", "👩🏻‍❤️‍💋‍👨🏼", "a😀b", "😀😀😀",
    "1", "12", "123", "1234", "12345678901234567890", "3.14159", "-0.5e-10", "1,234,567.89", "0x1F", "v1.2.3",
    "2024-06-01T12:34:56Z", "+1 (555) 123-4567", "١٢٣", "٣.١٤", "一二三", "Ⅻ", "๑๒๓", "₁₂₃",
    "你好", "你好，世界！", "我爱北京天安门", "こんにちは世界", "カタカナとひらがなと漢字", "안녕하세요", "한국어",
    "Привет, мир!", "Γειά σου Κόσμε", "ΣΊΣΥΦΟΣ", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
    "Tiếng Việt có dấu", "Ελληνικά και English mixed 中文", "abc中文def", "日本語English한국어", "İstanbul", "straße",
    "\U00011f04\U00011f05", "\u1c89\u1c8a", "\ua7cb", "\U0001e030", "\U00010d40", "x\U0001ccf0y",
    "int main() { return 0; }", "def f(x):\n    return x * 2\n", "{\"a\": [1, 2, {\"b\": null}]}",
    "#include <stdio.h>\n", "for i in range(10):\n\tprint(i)", "x += 1;  // comment", "/* block */", "a->b->c",
    "if (a && b || !c) {}", "<div class=\"x\">Hi</div>", "SELECT * FROM t WHERE id = 1;", "$ ls -la | grep .c",
    "https://example.com/path?q=1&r=2#frag", "user@example.com", "C:\\Windows\\System32", "~/.bashrc",
    "\"quoted\"", "'single'", "(parens) [brackets] {braces}", "!!!???", "...", "---", "___", "***", "@@@", "###",
]
for c in range(128):
    out.append(chr(c))
for c in list(range(0xA0, 0x100, 7)) + [0x100, 0x17F, 0x391, 0x3A3, 0x410, 0x5D0, 0x627, 0x905, 0xE01, 0x1100, 0x3042,
                                          0x30A2, 0x4E00, 0x9FFF, 0xAC00, 0xD7A3, 0xE000, 0xFFFD, 0x10000, 0x1F600, 0x10FFFD]:
    out.append(chr(c))

# --- generated
WORDS = ("the quick brown fox jumps over lazy dog model token language system memory value return "
         "function string error write read house water night world school story family question "
         "government number people through between because never should little right small").split()
for i in range(120):
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 25))]
    if rng.random() < 0.3:
        words[0] = words[0].upper() if rng.random() < 0.3 else words[0].capitalize()
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words) + 1), str(rng.randint(0, 10 ** rng.randint(1, 12))))
    sep = rng.choice([" ", " ", " ", "  ", "\n", " \n", "\t"])
    out.append(sep.join(words) + rng.choice(["", ".", "!", "?", " ", "\n", "..."]))
ZH = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"
JA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンー日本語東京"
KO = "가나다라마바사아자차카타파하거너더러머버서어저처커터퍼허고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후한국어문장"
for i in range(60):
    alpha = rng.choice([ZH, JA, KO])
    s = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 40)))
    if rng.random() < 0.3:
        s += rng.choice(["。", "、", "！", "？", " ", "\n", "，"])
    out.append(s)
CODE_TOKENS = ["int", "char", "*", "(", ")", "{", "}", ";", "return", "if", "else", "for", "while", "=", "==",
               "+=", "->", ".", ",", "0", "1", "42", "x", "y", "buf", "len", "\n", "    ", "\t", "def", "self",
               ":", "[", "]", "\"s\"", "'c'", "#", "//", "/*", "*/", "None", "True", "null", "\"key\"", "3.5"]
for i in range(60):
    out.append("".join(rng.choice(CODE_TOKENS) + rng.choice(["", " ", ""]) for _ in range(rng.randint(1, 40))))
EMOJI = ["😀", "😂", "👍", "👍🏻", "👍🏿", "❤️", "🔥", "🎉", "👨‍💻", "👩‍👩‍👦", "🇫🇷", "🏴‍☠️", "🙂", "✨", "🤖", "🧠", "\u200d", "\ufe0f"]
for i in range(30):
    out.append("".join(rng.choice(EMOJI + ["a", " ", "ok", "!"]) for _ in range(rng.randint(1, 15))))
for i in range(40):
    kind = rng.randrange(4)
    if kind == 0:
        out.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 60))))
    elif kind == 1:
        out.append("%d.%0*d" % (rng.randint(0, 10 ** 6), rng.randint(1, 8), rng.randint(0, 10 ** 7)))
    elif kind == 2:
        out.append(" ".join(str(rng.randint(-10 ** 9, 10 ** 9)) for _ in range(rng.randint(1, 8))))
    else:
        out.append(rng.choice(["$", "€", "£", ""]) + format(rng.randint(0, 10 ** 9), ",") + rng.choice(["", "%", " USD"]))
WS = [" ", "  ", "   ", "\t", "\n", "\r\n", " \n", "\n ", "\u00a0", "\u3000", "\r", "\x0b", "\x0c"]
for i in range(40):
    out.append("".join(rng.choice(WS + ["a", "b", "word", ".", "1"]) for _ in range(rng.randint(1, 30))))
for i in range(10):
    out.append(" " * rng.randint(1, 300) + "x" + "\n" * rng.randint(0, 50) + "\t" * rng.randint(0, 20))
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|end_of_text|>", "<s>", "</s>", "<unk>",
            "<tool_call>", "[[sep]]", "<|endoftext|>", "<repo_name>"]
for i in range(40):
    parts = []
    for _ in range(rng.randint(1, 8)):
        parts.append(rng.choice(SPECIALS) if rng.random() < 0.4 else rng.choice(WORDS + ["\n", " ", "  ", "你好", "😀", "'s"]))
    out.append(rng.choice(["", " "]).join(parts))
MIXED = ["hello", "世界", "мир", "κόσμος", "عالم", "😀", "123", " ", "\n", "é", "e\u0301", "ﬁ", "①", "Ａ"]
for i in range(30):
    out.append("".join(rng.choice(MIXED) for _ in range(rng.randint(1, 20))))
COMBINING = ["\u0300", "\u0301", "\u0308", "\u0323", "\u0327", "\u0316", "\u0334", "\u034f", "\u0345", "\u05b0", "\u093c", "\u3099"]
for i in range(30):
    out.append("".join(rng.choice("aeiounAEOUcs ") + "".join(rng.choice(COMBINING) for _ in range(rng.randint(0, 3)))
                       for _ in range(rng.randint(1, 10))))
# Long paragraphs (one BPE word of thousands of characters for split=False Metaspace).
for i in range(3):
    out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(300, 800))))
out.append("".join(rng.choice(ZH) for _ in range(2000)))

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl")
with open(path, "w", encoding="utf-8") as f:
    for s in out:
        f.write(json.dumps({"text": s}, ensure_ascii=False) + "\n")
print("%s: %d strings" % (path, len(out)))
