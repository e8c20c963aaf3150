// Names of user classes and methods for messages (the watchdog's), taken
// from the compiler's __PRETTY_FUNCTION__, which GCC, Clang and nvcc spell
// "... [with T = ns::Body]": the last name of the path, without namespaces
// or enclosing classes, so that a message says "Body" and "&Body::move".
// The templates only hand out that string; the text is cut by functions
// compiled once, so that a name costs an operation nothing at compile time.
#pragma once

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
