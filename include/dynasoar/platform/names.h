// Names of user classes and methods for messages (the watchdog's), taken
// from the compiler's __PRETTY_FUNCTION__, which GCC, Clang and nvcc spell
// "... [with T = ns::Body]": the last name of the path, without namespaces
// or enclosing classes, so that a message says "Body" and "&Body::move".
// The templates only hand out that string; the text is cut by functions
// compiled once, so that a name costs an operation nothing at compile time.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace dynasoar::platform {

/// What follows "= " in a __PRETTY_FUNCTION__, up to its closing ']' or ';'.
inline std::string_view template_argument(std::string_view pretty) {
  const std::size_t begin = pretty.find("= ");
  if (begin == std::string_view::npos) return pretty;
  std::string_view rest = pretty.substr(begin + 2);
  int depth = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (depth == 0 && (c == ';' || c == ']')) return rest.substr(0, i);
  }
  return rest;
}

/// The last `parts` names of a path a::b<x::y>::c, split at "::" outside
/// template arguments.
inline std::string last_names(std::string_view path, int parts) {
  int depth = 0;
  std::size_t cut = 0;
  int found = 0;
  for (std::size_t i = path.size(); i-- > 1;) {
    const char c = path[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (depth == 0 && c == ':' && path[i - 1] == ':' && ++found == parts) {
      cut = i + 1;
      break;
    }
  }
  return std::string(path.substr(cut));
}

/// `name` with every qualifier removed: "ns::{anonymous}::Cell* [3]"
/// becomes "Cell* [3]", "std::array<ns::Body*, 4>" becomes
/// "array<Body*, 4>". nvcc names an anonymous namespace after the file
/// ("_GLOBAL__N__..._objects_cu_..."), GCC "{anonymous}"; without the
/// qualifiers, the host and the CUDA build of a program name its types alike
/// (checkpoint files compare them, move/checkpoint.h).
inline std::string unqualified_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != ':' || i + 1 == name.size() || name[i + 1] != ':') {
      out += name[i];
      continue;
    }
    ++i;  // "::": drop it and the qualifier before it (template arguments and "{anonymous}" included)
    if (!out.empty() && out.back() == '>') {
      int depth = 0;
      while (!out.empty()) {
        const char c = out.back();
        out.pop_back();
        if (c == '>') ++depth;
        if (c == '<' && --depth == 0) break;
      }
    } else if (!out.empty() && out.back() == '}') {
      while (!out.empty() && out.back() != '{') out.pop_back();
      if (!out.empty()) out.pop_back();
    }
    while (!out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_'))
      out.pop_back();
  }
  return out;
}

/// The compiler's name of this function for T, which names T.
template <class T>
const char* pretty_type_name() {
  return __PRETTY_FUNCTION__;
}
/// The compiler's name of this function for the value M (a member function pointer).
template <auto M>
const char* pretty_value_name() {
  return __PRETTY_FUNCTION__;
}

/// "Body" for pretty_type_name<ns::World<...>::Body>().
inline std::string type_name(const char* pretty) {
  return last_names(template_argument(pretty), 1);
}

/// "&Body::move" for pretty_value_name<&ns::Body::move>().
inline std::string method_name(const char* pretty) {
  const std::string_view full = template_argument(pretty);
  const bool address = !full.empty() && full.front() == '&';
  std::string name = address ? "&" : "";
  name += last_names(address ? full.substr(1) : full, 2);
  return name;
}

}  // namespace dynasoar::platform
