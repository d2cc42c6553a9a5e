// Reading a certificate strictly: ropesim-verify's own small reader (it links nothing of
// ropesim, so io/files.cpp is not used; this follows the same rules). Part of
// verify/ropesim_verify.cpp's translation unit: included inside its anonymous namespace after
// Unreadable and Invalid.
//
// THE FILE. At most kMaxCertificateBytes (64 MiB, ropesim's input limit) are read: a regular
// file larger than that is refused before reading, anything else (a FIFO, a terminal,
// /dev/stdin, /dev/zero) once it has sent more. A FIFO is opened without waiting for a writer
// and a source that sends nothing for kCertificateIdleSeconds (30 s, ropesim's) is refused.
// A directory is refused. Every refusal is one line, exit 2.
//
// THE JSON. nlohmann-json parses it with a callback that refuses (exit 2) a key given twice in
// one object (the parser would keep the last), a number that is not an integer (no
// certificate holds one: values in F, gaps and weights are strings, so 1.5 or 2.0 as a period
// or a position is refused rather than truncated), and nesting deeper than 64. Keys a
// certificate kind does not have are refused by only_keys (exit 2 naming the key).

constexpr std::size_t kMaxCertificateBytes = std::size_t{64} << 20;
constexpr int kCertificateIdleSeconds = 30;
constexpr int kMaxJsonDepth = 64;

/// The whole file at `path` within the limits above (Unreadable otherwise).
std::string read_certificate_file(const std::string& path) {
  const std::string where = "cannot read " + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw Unreadable("cannot open " + path + " (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Unreadable(where + " (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw Unreadable(path + ": is a directory; accepted: a certificate");
  const auto too_long = [&] {
    throw Unreadable(path + ": longer than 64 MiB, the limit for a certificate");
  };
  const bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<std::uintmax_t>(st.st_size) > kMaxCertificateBytes) too_long();
  std::string text;
  if (regular) text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    if (!regular) {
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, kCertificateIdleSeconds * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0)
        throw Unreadable(path + ": no data for " + std::to_string(kCertificateIdleSeconds) +
                         " s; accepted: a certificate that ends");
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (regular) continue;
        // a FIFO without a writer yet: poll reported no data; wait once more (bounded above)
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, kCertificateIdleSeconds * 1000) == 0)
          throw Unreadable(path + ": no data for " + std::to_string(kCertificateIdleSeconds) +
                           " s; accepted: a certificate that ends");
        continue;
      }
      throw Unreadable(where + " (" + std::strerror(errno) + ")");
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxCertificateBytes) too_long();
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

/// Parses `text` strictly (see the header): Unreadable for bad JSON, a repeated key, a number
/// that is not an integer, or nesting deeper than kMaxJsonDepth.
json parse_strict(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string problem;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (!problem.empty()) return false;
    if (depth > kMaxJsonDepth) problem = "nested deeper than 64";
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        if (!keys.empty() && !keys.back().insert(key).second)
          problem = "the key '" + key + "' is given twice in one object";
        break;
      }
      case json::parse_event_t::value:
        if (parsed.is_number_float())
          problem = "the number " + parsed.dump() +
                    " is not an integer (a certificate's numbers are integers; values in F "
                    "are hexadecimal strings)";
        break;
      default:
        break;
    }
    return problem.empty();
  };
  json j;
  try {
    j = json::parse(text, callback);
  } catch (const json::exception& e) {
    if (problem.empty()) throw Unreadable(std::string("not JSON: ") + e.what());
  }
  if (!problem.empty()) throw Unreadable("malformed certificate: " + problem);
  return j;
}

/// Refuses (Unreadable) a key of object `j` that is not in `allowed`; `where` names the object.
void only_keys(const json& j, std::initializer_list<const char*> allowed,
               const std::string& where) {
  if (!j.is_object()) throw Unreadable(where + ": expected an object");
  for (const auto& item : j.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || item.key() == a;
    if (!known) throw Unreadable(where + ": unknown key '" + item.key() + "'");
  }
}
