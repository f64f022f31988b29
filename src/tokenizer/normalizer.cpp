#include "tokenizer/normalizer.h"

#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>

#include "util/checked.h"
#include "util/error.h"

#ifdef BOSCH_WITH_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

namespace bosch {

bool Normalizer::has_icu() {
#ifdef BOSCH_WITH_ICU
  return true;
#else
  return false;
#endif
}

std::string nfc(const std::string& text) {
  bool ascii = true;
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) { ascii = false; break; }
  if (ascii) return text;  // ASCII is always NFC
#ifdef BOSCH_WITH_ICU
  UErrorCode st = U_ZERO_ERROR;
  const UNormalizer2* n = unorm2_getNFCInstance(&st);
  check(U_SUCCESS(st), "ICU: NFC normalizer unavailable: {}", u_errorName(st));
  int32_t len16 = 0;
  st = U_ZERO_ERROR;
  u_strFromUTF8(nullptr, 0, &len16, text.data(), static_cast<int32_t>(text.size()), &st);
  std::u16string src(len16, u'\0');
  st = U_ZERO_ERROR;
  u_strFromUTF8(reinterpret_cast<UChar*>(src.data()), len16, nullptr, text.data(),
                static_cast<int32_t>(text.size()), &st);
  check(U_SUCCESS(st), "ICU: UTF-8 conversion failed: {}", u_errorName(st));
  auto* s = reinterpret_cast<const UChar*>(src.data());
  st = U_ZERO_ERROR;
  int32_t ok = unorm2_spanQuickCheckYes(n, s, len16, &st);
  if (U_SUCCESS(st) && ok == len16) return text;
  st = U_ZERO_ERROR;
  int32_t need = unorm2_normalize(n, s, len16, nullptr, 0, &st);
  std::u16string dst(need, u'\0');
  st = U_ZERO_ERROR;
  unorm2_normalize(n, s, len16, reinterpret_cast<UChar*>(dst.data()), need, &st);
  check(U_SUCCESS(st), "ICU: NFC failed: {}", u_errorName(st));
  int32_t len8 = 0;
  st = U_ZERO_ERROR;
  u_strToUTF8(nullptr, 0, &len8, reinterpret_cast<const UChar*>(dst.data()), need, &st);
  std::string out(len8, '\0');
  st = U_ZERO_ERROR;
  u_strToUTF8(out.data(), len8, nullptr, reinterpret_cast<const UChar*>(dst.data()), need, &st);
  check(U_SUCCESS(st), "ICU: UTF-8 conversion failed: {}", u_errorName(st));
  return out;
#else
  static std::once_flag warned;
  std::call_once(warned, [] {
    std::fprintf(stderr, "bosch: warning: built without ICU; NFC normalization of non-ASCII text "
                         "is skipped (ids may differ from the reference for non-NFC input)\n");
  });
  return text;
#endif
}

Normalizer Normalizer::from_json(const nlohmann::json& j, const std::string& file) {
  Normalizer out;
  out.file_ = file;
  if (j.is_null()) return out;
  std::string type = j.value("type", "");
  if (type == "Sequence") {
    for (const auto& sub : j.at("normalizers")) {
      Normalizer n = from_json(sub, file);
      out.steps_.insert(out.steps_.end(), n.steps_.begin(), n.steps_.end());
    }
  } else if (type == "NFC") {
    out.steps_.push_back({Step::Kind::NFC, "", ""});
  } else if (type == "Prepend") {
    out.steps_.push_back({Step::Kind::Prepend, j.at("prepend").get<std::string>(), ""});
  } else if (type == "Replace") {
    const auto& pat = j.at("pattern");
    check(pat.contains("String"), "{}: normalizer Replace with a regex pattern is not supported", file);
    out.steps_.push_back({Step::Kind::Replace, pat.at("String").get<std::string>(),
                          j.at("content").get<std::string>()});
  } else {
    fail("{}: normalizer type \"{}\" is not supported (expected NFC, Prepend, Replace or Sequence)",
         file, excerpt(type));
  }
  return out;
}

std::string Normalizer::apply(std::string text) const {
  const size_t input = text.size(), bound = 4 * input + 256;
  auto grows_to = [&](size_t step, size_t n, const char* kind) {
    check(n <= bound, "{}: normalizer step {} ({}) would make a {}-byte input {} bytes long, over the bound of "
          "4x the input + 256 bytes", file_, step, kind, input, n);
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    switch (s.kind) {
      case Step::Kind::NFC:
        text = nfc(text);
        grows_to(i, text.size(), "NFC");
        break;
      case Step::Kind::Prepend:
        if (!text.empty()) {
          grows_to(i, text.size() + s.a.size(), "Prepend");
          text = s.a + text;
        }
        break;
      case Step::Kind::Replace: {
        if (s.a.empty()) break;
        if (s.b.size() > s.a.size()) {  // the result's size, known before it is built
          size_t hits = 0;
          for (size_t k = text.find(s.a); k != std::string::npos; k = text.find(s.a, k + s.a.size())) ++hits;
          grows_to(i, text.size() + hits * (s.b.size() - s.a.size()), "Replace");
        }
        std::string r;
        size_t i0 = 0, k;
        while ((k = text.find(s.a, i0)) != std::string::npos) {
          r.append(text, i0, k - i0);
          r += s.b;
          i0 = k + s.a.size();
        }
        r.append(text, i0);
        text = std::move(r);
        break;
      }
    }
  }
  return text;
}

}  // namespace bosch
