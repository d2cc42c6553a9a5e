#pragma once
/// The lists users write on the command line and in Python (`--formats bf16,p=11,e=5`,
/// `--schedules`, `--realizations`), split where a new item starts, and the one-line form of an
/// error message: shared by cli/ and python/ so both read and refuse the same text.
#include <string>
#include <string_view>
#include <vector>

#include "core/lists.hpp"

namespace ropesim::numeric {

/// What a list holds, which decides where a comma starts a new item.
enum class ListKind {
  plain,         ///< every comma separates items (model names, realisations)
  formats,       ///< `p=11,e=5,fp16`: an item starting with `p=` or without `=` is a new format
  schedules,     ///< `conventional:base=1e4,dim=128,single:g=1,periodic:m=2,3,12,phi-2`: an item
                 ///< with `:`, or a name (letters, no `=`), is a new schedule
  realisations,  ///< `r1,hf;pipeline:angle=fp16;cos_sin=fp32;r2`: every comma separates items,
                 ///< and a `;` group `key=value` (no `:`) continues the `pipeline:` before it
};

/// Splits a list on ';' (always a separator) and on the commas that start a new item of
/// `kind`, so specs that contain commas can be listed as they are written. An empty `text` is
/// the empty list; inside a non-empty one every empty item
/// ('3,,4', 'p=8,e=5;;', a trailing ',') is refused (ropesim::split_items), and repeats as
/// `repeats` says: throws InvalidArgument naming `flag`.
std::vector<std::string> split_list(const std::string& text, const std::string& flag,
                                    ListKind kind = ListKind::plain,
                                    ropesim::Repeats repeats = ropesim::Repeats::items);

/// split_list, refusing an item listed twice (a grid cell computed twice is a typo, not a
/// request): throws InvalidArgument naming `flag` and the repeated item. Format lists expand
/// ranges (`p=4..53,e=11`, numeric::expand_format_range) first and also refuse one format
/// under two spellings.
std::vector<std::string> split_unique(const std::string& text, const std::string& flag,
                                      ListKind kind = ListKind::plain);

/// `message` as one readable line: newlines become spaces, quoted values over 80 characters
/// are shortened (an error echoing a 1 MB value must not print a 1 MB line).
std::string one_line(std::string_view message);

}  // namespace ropesim::numeric
