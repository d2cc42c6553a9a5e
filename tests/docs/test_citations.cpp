// Every "THEORY §N" and "NUMERIC §N" in the repository — code, docs, examples, and the strings
// that commands print (they are literals in cli/ and the libraries) — names a section that
// docs/THEORY.md resp. docs/NUMERIC.md has. A named result after the section ("THEORY §5 T1",
// "§7 C4") must occur in that section, and a quoted phrase on the same line ("THEORY §3
// "Pairing"") in one of the sections the citation names (case-insensitive, spaces folded).
//
// Forms read: `THEORY §5`, `THEORY.md §8`, lists `THEORY §2, §7 C1`, ranges `THEORY §6–§7`,
// `NUMERIC §3–4`. Other papers' sections ("RoPE-X §2.4") are not citations of these files.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// The text of each section of a Markdown file, keyed by its number: "## 5. Theorems" opens
/// section "5" (which runs to the next "## " heading, its subsections included), "### 2.1 …"
/// opens "2.1" (to the next "## " or "### " heading).
std::map<std::string, std::string> sections_of(const std::string& markdown) {
  std::map<std::string, std::string> out;
  static const std::regex heading(R"(^(#{2,3}) ([0-9]+(\.[0-9]+)*)\.? )");
  std::string open2, open3;  // the section numbers currently open at levels 2 and 3
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    const bool h2 = line.rfind("## ", 0) == 0, h3 = line.rfind("### ", 0) == 0;
    if (h2 || h3) {
      open3.clear();
      if (h2) open2.clear();
      if (std::regex_search(line, m, heading)) {
        (m[1].length() == 2 ? open2 : open3) = m[2].str();
      }
    }
    if (!open2.empty()) out[open2] += line + "\n";
    if (!open3.empty()) out[open3] += line + "\n";
  }
  return out;
}

std::string folded(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

struct Documents {
  std::map<std::string, std::string> theory, numeric;
  const std::map<std::string, std::string>& of(const std::string& name) const {
    return name == "THEORY" ? theory : numeric;
  }
};

/// One problem per unresolved citation in `text`, as "WHERE:LINE: THEORY §9: …"; `count`
/// receives the number of section references read.
std::vector<std::string> check_citations(const std::string& text, const std::string& where,
                                         const Documents& docs, std::size_t& count) {
  using std::regex_constants::match_continuous;
  static const std::regex head(R"((THEORY|NUMERIC)(\.md)? ?§ ?([0-9]+(\.[0-9]+)*))");
  static const std::regex next_section(R"(^ ?(,|/|and|–|—|-) ?§ ?([0-9]+(\.[0-9]+)*))");
  static const std::regex range_end(R"(^(–|-)([0-9]+)\b)");
  static const std::regex label(R"(^,? ((T|C)[0-9]+)\b)");
  static const std::regex quoted(R"(^[,:]? \\?"([A-Za-z][^"\\\n]{2,80})\\?")");
  std::vector<std::string> problems;
  std::size_t read_to = 0;  // the end of the last citation read (its list included)
  for (std::size_t at = text.find("§"); at != std::string::npos; at = text.find("§", at + 1)) {
    if (at < read_to) continue;
    // Only a § right after "THEORY" / "NUMERIC" (".md" and one space allowed) starts a citation.
    const std::size_t from = at >= 12 ? at - 12 : 0;
    const std::string before = text.substr(from, at - from);
    const std::size_t t = before.rfind("THEORY"), n = before.rfind("NUMERIC");
    if (t == std::string::npos && n == std::string::npos) continue;
    const std::size_t start =
        from + (n == std::string::npos || (t != std::string::npos && t > n) ? t : n);
    const std::string window = text.substr(start, 400);
    std::smatch m;
    if (!std::regex_search(window, m, head, match_continuous)) continue;
    const std::string name = m[1].str();
    const auto& sections = docs.of(name);
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(start), '\n');
    auto report = [&](const std::string& section, const std::string& what) {
      problems.push_back(where + ":" + std::to_string(line) + ": " + name + " §" + section + ": " +
                         what);
    };
    std::string cited_text;  // the sections this citation names so far, for a quoted phrase
    auto exists = [&](const std::string& section) {
      ++count;
      if (sections.count(section) == 1) {
        cited_text += folded(sections.at(section));
        return true;
      }
      report(section, "no such section in docs/" + name + ".md");
      return false;
    };
    std::size_t pos = static_cast<std::size_t>(m.length(0));
    // The section cited last, with the labels ("T1, T5") and the quoted phrase after it.
    auto with_tail = [&](const std::string& section) {
      const bool found = exists(section);
      std::smatch s;
      std::string rest = window.substr(pos);
      while (std::regex_search(rest, s, label, match_continuous)) {
        const std::string l = s[1].str();
        if (found && !std::regex_search(sections.at(section), std::regex("\\b" + l + "\\b")))
          report(section, l + " is not in that section");
        pos += static_cast<std::size_t>(s.length(0));
        rest = window.substr(pos);
      }
      if (found && std::regex_search(rest, s, quoted, match_continuous) &&
          cited_text.find(folded(s[1].str())) == std::string::npos)
        report(section, "\"" + s[1].str() + "\" is not in the sections cited");
    };
    std::string current = m[3].str();
    for (;;) {
      with_tail(current);
      const std::string rest = window.substr(pos);
      std::smatch s;
      if (std::regex_search(rest, s, range_end, match_continuous)) {  // NUMERIC §3–4
        for (int k = std::stoi(current) + 1; k < std::stoi(s[2].str()); ++k)
          exists(std::to_string(k));
        current = s[2].str();
      } else if (std::regex_search(rest, s, next_section, match_continuous)) {  // §2, §7 / §6–§7
        const std::string separator = s[1].str();
        if (separator != "," && separator != "/" && separator != "and")
          for (int k = std::stoi(current) + 1; k < std::stoi(s[2].str()); ++k)
            exists(std::to_string(k));
        current = s[2].str();
      } else {
        break;
      }
      pos += static_cast<std::size_t>(s.length(0));
    }
    read_to = start + pos;
  }
  return problems;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Documents repository_documents() {
  const fs::path root(ROPESIM_SOURCE_DIR);
  return {sections_of(read(root / "docs/THEORY.md")), sections_of(read(root / "docs/NUMERIC.md"))};
}

}  // namespace

TEST_CASE("the section parser reads the numbered headings of THEORY.md and NUMERIC.md", "[docs]") {
  const Documents docs = repository_documents();
  // The numbering code, docs and output cite (grep over the tree before docs/THEORY.md
  // existed): THEORY §1–§8 with §2.1, NUMERIC §1–§4.
  for (const char* s : {"1", "2", "2.1", "3", "4", "5", "6", "7", "8"}) {
    INFO("THEORY §" << s);
    CHECK(docs.theory.count(s) == 1);
  }
  for (const char* s : {"1", "2", "3", "4"}) {
    INFO("NUMERIC §" << s);
    CHECK(docs.numeric.count(s) == 1);
  }
  CHECK(docs.theory.count("9") == 0);
  // §2 includes its subsection; §2.1 ends at §3.
  CHECK(docs.theory.at("2").find("### 2.1") != std::string::npos);
  CHECK(docs.theory.at("2.1").find("## 3.") == std::string::npos);
}

TEST_CASE("the checker reports a bogus citation and accepts the forms the tree uses", "[docs]") {
  Documents docs;
  docs.theory = sections_of(
      "# T\n## 1. One\nf_large\n## 2. Two\n### 2.1 Policy\nevery choice configurable\n"
      "## 5. Theorems\n- **T1** and **T5**\n### The converse as identities\n## 6. Six\n"
      "## 7. Seven\n- **C5** head\n");
  docs.numeric = sections_of("## 1. A\n## 2. B\n## 3. C\n\"hf\"\n## 4. D\n");
  std::size_t count = 0;
  auto problems = [&](const std::string& text) { return check_citations(text, "x", docs, count); };
  CHECK(problems("see (THEORY §1) and THEORY.md §2.1 and NUMERIC §3 \"hf\"").empty());
  CHECK(problems("(THEORY §5 T1, T5, §7 C5; NUMERIC §3–4)").empty());
  CHECK(problems("THEORY §6–§7 C5 and THEORY §2, §7; RoPE-X §9 is not ours").empty());
  CHECK(problems("// (THEORY §5 \"The converse as identities\")").empty());
  CHECK(problems("THEORY §2.1 \"every choice configurable\"").empty());

  const auto bogus = problems("line one\nsee THEORY §9.");
  REQUIRE(bogus.size() == 1);
  CHECK(bogus[0] == "x:2: THEORY §9: no such section in docs/THEORY.md");
  CHECK(problems("THEORY §2.2 (no such subsection)").size() == 1);
  CHECK(problems("NUMERIC §1–5").size() == 1);           // §5 of NUMERIC does not exist
  CHECK(problems("THEORY §3–§6").size() == 2);           // §3 and §4 do not exist
  CHECK(problems("THEORY §5 T6").size() == 1);           // T6 is not in the mock §5
  CHECK(problems("THEORY §1, §7 C4").size() == 1);       // C4 is not in the mock §7
  CHECK(problems("THEORY §3 \"Pairing\"").size() == 1);  // no §3 at all
  CHECK(problems("THEORY §6–§7, \"Six\"").empty());      // a phrase may be in any section cited
  CHECK(problems("NUMERIC §3 \"vllm\"").size() == 1);    // §3 exists, the phrase does not
}

TEST_CASE("every THEORY § and NUMERIC § cited in the repository exists", "[docs]") {
  const fs::path root(ROPESIM_SOURCE_DIR);
  const Documents docs = repository_documents();
  std::vector<std::string> problems;
  std::size_t count = 0, files = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      // build trees, .git and other hidden directories hold no sources
      if (name.rfind("build", 0) == 0 || name.rfind('.', 0) == 0) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->file_size() > (8u << 20)) continue;
    const std::string text = read(it->path());
    if (text.find('\0') != std::string::npos) continue;  // binary (PNG figures)
    const std::string relative = fs::relative(it->path(), root).string();
    if (relative == "tests/docs/test_citations.cpp")
      continue;  // its bogus citations are on purpose
    ++files;
    const auto found = check_citations(text, relative, docs, count);
    problems.insert(problems.end(), found.begin(), found.end());
  }
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  INFO(all);
  CHECK(problems.empty());
  // Not vacuous: `grep -roE '(THEORY|NUMERIC)(\.md)? ?§ ?[0-9]' --exclude-dir=build` finds 646
  // citations outside this file (2026-12-02); their lists and ranges name 731 sections.
  CHECK(files > 300);
  CHECK(count > 600);
}
