// A minimal streaming JSON writer (objects, arrays, strings, numbers) for timing and summary files.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace rad {

class JsonWriter {
 public:
  JsonWriter &BeginObject() { Value(); out_ += '{'; first_.push_back(true); return *this; }
  JsonWriter &EndObject() { out_ += '}'; first_.pop_back(); return *this; }
  JsonWriter &BeginArray() { Value(); out_ += '['; first_.push_back(true); return *this; }
  JsonWriter &EndArray() { out_ += ']'; first_.pop_back(); return *this; }
  JsonWriter &Key(const std::string &k) {
    Separate();
    Quote(k);
    out_ += ':';
    afterKey_ = true;
    return *this;
  }
  JsonWriter &String(const std::string &s) { Value(); Quote(s); return *this; }
  JsonWriter &Number(double v) {
    Value();
    if (!std::isfinite(v)) { out_ += "null"; return *this; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out_ += buf;
    return *this;
  }
  const std::string &str() const { return out_; }

 private:
  void Separate() {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void Value() {
    if (afterKey_) { afterKey_ = false; return; }
    Separate();
  }
  void Quote(const std::string &s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') { out_ += '\\'; out_ += c; }
      else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); out_ += b; }
      else out_ += c;
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
  bool afterKey_ = false;
};

}  // namespace rad
