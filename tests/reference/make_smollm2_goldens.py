#!/usr/bin/env python3
"""tests/reference/make_smollm2_goldens.py — goldens for the default model.

transformers loads models/SmolLM2-135M-Instruct.Q4_1.gguf (its GGUF support
dequantizes the weights to float32) with the tokenizer and chat template from
the same file, renders 5 chat prompts, and records for each: the prompt ids,
the 32-token greedy continuation, and the logits of the first decode step
(the logits after the prompt). Writes tests/reference/smollm2/goldens.json and
first_logits.npy ([5, vocab] float32). Run by hand in the reference venv:

    /tmp/refvenv/bin/python tests/reference/make_smollm2_goldens.py models/SmolLM2-135M-Instruct.Q4_1.gguf
"""
import json
import os
import sys

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain what a CPU does in one sentence.",
    "List three colors of the rainbow.",
    "What is 12 plus 30?",
]
N_GREEDY = 32


def main():
    gguf_path = os.path.abspath(sys.argv[1])
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "smollm2")
    os.makedirs(out_dir, exist_ok=True)
    folder, name = os.path.split(gguf_path)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.eval()
    records, first_logits = [], []
    for prompt in PROMPTS:
        messages = [{"role": "user", "content": prompt}]
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            # An explicit mask: the prompt holds <|im_end|> (id 2), which would
            # otherwise be taken for padding and masked out.
            input_ids = torch.tensor([ids])
            out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), do_sample=False,
                                 max_new_tokens=N_GREEDY,
                                 min_new_tokens=N_GREEDY, output_logits=True,
                                 return_dict_in_generate=True, eos_token_id=None, pad_token_id=2)
        new = out.sequences[0, len(ids):].tolist()
        first_logits.append(out.logits[0][0].float().numpy())
        records.append({"prompt": prompt, "text": text, "ids": ids, "greedy": new,
                        "greedy_text": tok.decode(new)})
        print(prompt, "->", repr(tok.decode(new)))
    np.save(os.path.join(out_dir, "first_logits.npy"), np.stack(first_logits).astype(np.float32))
    meta = {"model": name, "torch": torch.__version__, "transformers": transformers.__version__,
            "n_greedy": N_GREEDY, "prompts": records}
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(meta, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
