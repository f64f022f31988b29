// `bosch tokenize MODEL`: text on stdin -> ids on one line; `--decode`: ids on stdin -> text.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cli/command.h"
#include "tokenizer/tokenizer.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

struct TokenizeOptions {
  std::string model;
  bool decode = false, no_bos = false, chat = false;
};

void run_tokenize(const TokenizeOptions& o) {
  std::string path = resolve_model(o.model);
  std::unique_ptr<Tokenizer> tok = load_tokenizer(path);
  std::string input = read_stdin();
  if (o.decode) {
    std::istringstream in(input);
    std::string word;
    StreamDecoder dec(*tok);
    std::string out;
    while (in >> word) {
      size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      check(used == word.size() && id >= 0 && id < tok->vocab_size(),
            "stdin: \"{}\" is not a token id of {} (expected integers in [0, {}))", excerpt(word), path, tok->vocab_size());
      out += dec.push(static_cast<int32_t>(id));
    }
    out += dec.flush();
    std::fwrite(out.data(), 1, out.size(), stdout);
    return;
  }
  std::string text = o.chat ? tok->apply_chat_template(input) : input;
  std::vector<int32_t> ids = tok->encode(text, !o.no_bos);
  std::string line;
  line.reserve(ids.size() * 6 + 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

CommandRegistrar reg("tokenize", "encode stdin to token ids (or --decode ids to text)", [](CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  add_opt(app, "model", o->model,
                 "a .gguf file, a Hugging Face model directory or a tokenizer.json (default: the default model)");
  app.add_flag("--decode", o->decode, "read whitespace-separated ids, print the text");
  app.add_flag("--no-bos", o->no_bos, "do not prepend BOS even when the model's metadata asks for it");
  app.add_flag("--chat", o->chat, "wrap the text as one user turn of the model's chat template");
  app.footer("The text is taken byte for byte (a trailing newline is part of it). Invalid UTF-8 "
               "is encoded as U+FFFD.");
  app.callback([o] { run_tokenize(*o); });
});

}  // namespace
}  // namespace bosch::cli
