// How reports print a path. A file name is bytes: anything but '/' and NUL,
// not necessarily UTF-8. A JSON string must be valid UTF-8 with its control
// characters escaped, and a line of a text report must stay one line, so both
// forms escape what they cannot carry as is (the rules are in docs/cli.md).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace sqdiff::tools {

// Whether `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF, no cut-off sequences).
bool is_utf8(std::string_view bytes);

// A JSON string literal (quotes included) for `bytes`: `"` and `\` escaped,
// control characters as \n, \t, \r, \b, \f or \u00XX, other UTF-8 as is, and
// what is not well-formed UTF-8 replaced by U+FFFD (written \ufffd), one for
// each maximal ill-formed part, as Python's bytes.decode("utf-8", "replace")
// does. Lossless unless is_utf8(bytes) is false: see hex_bytes.
std::string json_string(std::string_view bytes);

// The bytes in lowercase hex, two digits each: "x\xffy" gives "78ff79".
std::string hex_bytes(std::string_view bytes);

// `bytes` for one line of a text report, unambiguously: `\` doubled; control
// characters (C0 and DEL) as \n, \t, \r or \xHH; each byte that is not part of
// well-formed UTF-8 as \xHH; the C1 controls and the Unicode line and
// paragraph separators (U+0085, U+2028, U+2029: line breaks to some readers)
// as \u0085, \u2028, \u2029; other UTF-8 as is.
std::string one_line_text(std::string_view bytes);

// The one rule for every line the program writes that may hold text from
// outside (a path, a tensor or layer name, an operator's custom code, a
// member of an archive): the whole line through one_line_text, once, where it
// is written, so that a name can neither start a forged line nor send an
// escape sequence to the terminal. The messages themselves stay raw.
void write_line(std::ostream& out, std::string_view line);

// "sqdiff: error: MESSAGE\n" with MESSAGE as write_line writes it.
std::string error_line(std::string_view message);

}  // namespace sqdiff::tools
