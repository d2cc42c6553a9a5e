#include "logic/zoo.hpp"

#include "core/error.hpp"

namespace ropesim::ltl {

namespace {

// Why a language is outside LTL[P,MOD] when its minimal DFA has a strongly connected component
// that is not a simple cycle: the k-automaton argument of [RoPE-X Thm 3.3] (THEORY §5, T6).
const std::vector<ZooLanguage>& table() {
  static const std::vector<ZooLanguage> languages = {
      {"(aa)*",
       {"a", "b"},
       "(aa)*",
       "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !a)",
       "LTL[P,MOD]",
       "RoPE-X Prop 3.2 (THEORY §4, §5): (w_1...w_m)* = MOD_m^1 & !P(OR_r (MOD_m^(r mod m) & "
       "!w_r)) read at N+1 (MOD at N+1 counts EOS, so mod(2,1) there says N is even). Not in "
       "LTL[P]: its minimal DFA has the 2-cycle even <-> odd (LC25 Thm 4.1, THEORY §5 T2). "
       "Experiments: RoPE-X (THEORY §8)."},
      {"(ab)*",
       {"a", "b"},
       "(ab)*",
       "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)",
       "LTL[P,MOD]",
       "RoPE-X Prop 3.2 (THEORY §4, §5), the same construction with w = ab. Not in LTL[P]: the "
       "minimal DFA has a 2-cycle (LC25 Thm 4.1). Experiments: RoPE-X (THEORY §8)."},
      {"a.*",
       {"a", "b"},
       "a.*",
       "P(a & !P true)",
       "LTL[P]",
       "a Sigma*: THEORY §4 (P(pi_a & !P true): the first position has a). Experiments: RoPE-X "
       "(THEORY §8)."},
      {".*a",
       {"a", "b"},
       ".*a",
       "Y a",
       "none",
       "Sigma* a: THEORY §4 gives Y a (LTL[P,Y]). Not in LTL[P,MOD] (RoPE-X Thm 3.3, THEORY §5 "
       "T6): in the minimal DFA (states: last letter a or not) every block u of length k sends "
       "both states to the state of u's last letter, so the k-automaton has the cycle a^k, b^k "
       "between two states for every k and is never partially ordered. Experiments: RoPE-X "
       "(THEORY §8)."},
      {".*ab.*",
       {"a", "b"},
       ".*ab.*",
       "P(b & P a)",
       "LTL[P]",
       "Sigma* ab Sigma* over {a,b}: a word contains the factor ab iff some b comes after some "
       "a (the first b after an a is preceded by an a), so P(b & P a) is in LTL[P] (RoPE-X Prop "
       "B.2, THEORY §5). THEORY §4's P(b & Y a) also defines it."},
      {".*ab.*/abc",
       {"a", "b", "c"},
       ".*ab.*",
       "P(b & Y a)",
       "none",
       "Sigma* ab Sigma* over {a,b,c}: THEORY §4 gives P(pi_b & Y pi_a) (LTL[P,Y]). Not in "
       "LTL[P,MOD] for |Sigma| > 2: RoPE-X Prop B.2 (THEORY §5). The same language as LT-2."},
      {"PARITY",
       {"a", "b"},
       "a*(ba*ba*)*",
       "",
       "none",
       "LC25 (THEORY §8): an even number of b. Not in LTL[P,MOD]: RoPE-X Prop B.3 (THEORY §5). "
       "No formula in any logic here: its syntactic monoid contains the group Z_2, so it is not "
       "star-free (Schützenberger; McNaughton & Papert) and not in LTL = LTL[S] = FO[<] (Kamp); "
       "with MOD neither, since FO[<,MOD] needs a quasi-aperiodic syntactic morphism "
       "(Barrington, Compton, Straubing & Thérien 1992) and here the words a^k and b a^(k-1) of "
       "every length k act as the two elements of Z_2."},
      {"FIRST",
       {"a", "b"},
       "b.*",
       "P(b & !P true)",
       "LTL[P]",
       "LC25 FIRST = b Sigma* (THEORY §8): left-deterministic, hence LTL[P] (LC25 Thm 4.1)."},
      {"LAST",
       {"a", "b"},
       ".*b",
       "Y b",
       "none",
       "LC25 LAST = Sigma* b (THEORY §8); Y b is in LTL[P,Y]. Not in LTL[P,MOD]: as for Sigma* "
       "a, the k-automaton has the cycle a^k, b^k between the two states of the minimal DFA for "
       "every k (RoPE-X Thm 3.3, THEORY §5 T6)."},
      {"LT-1",
       {"a", "b"},
       ".*a.*",
       "P a",
       "LTL[P]",
       "LC25 LT-1 = Sigma* a Sigma* (THEORY §8): left-deterministic, LTL[P] (LC25 Thm 4.1)."},
      {"LT-2",
       {"a", "b", "c"},
       ".*ab.*",
       "P(b & Y a)",
       "none",
       "LC25 LT-2 = Sigma* ab Sigma* (THEORY §8), here over {a,b,c} (the same language as "
       "`.*ab.*/abc`); P(b & Y a) is in LTL[P,Y]. Not in LTL[P,MOD] for |Sigma| > 2: RoPE-X "
       "Prop B.2."},
      {"PT-2",
       {"a", "b", "c"},
       ".*a.*b.*",
       "P(b & P a)",
       "LTL[P]",
       "LC25 PT-2 = Sigma* a Sigma* b Sigma* (THEORY §8), here over {a,b,c}: "
       "left-deterministic, LTL[P] (LC25 Thm 4.1)."},
      {"LDP-1",
       {"a", "b", "c", "d"},
       "(c|d)*a(a|b|d)*",
       "P(a & !P(a | b)) & !P(c & P(a & !P(a | b)))",
       "LTL[P]",
       "LC25 LDP-1 = (Sigma\\{a,b0})* a (Sigma\\{b1})* (THEORY §8) with b0 -> b, b1 -> c, over "
       "{a,b,c,d}: the first a comes before any b, and no c follows it. Left-deterministic "
       "polynomial, hence LTL[P] (LC25 Thm 4.1)."},
      {"LDP-2",
       {"a", "b", "c", "d", "e", "f"},
       "(c|d|e|f)*a(a|b|e|f)*c(a|b|c|d|f)*",
       "P(c & P(a & !P(a | b)) & !P((c | d) & P(a & !P(a | b)))) & !P(e & P(c & P(a & !P(a | "
       "b)) & !P((c | d) & P(a & !P(a | b)))))",
       "LTL[P]",
       "The degree-2 left-deterministic polynomial (Sigma\\{a0,b0})* a0 (Sigma\\{a1,b1})* a1 "
       "(Sigma\\{b2})*, extending LC25's LDP-1 pattern (THEORY §8 lists LDP-* as LTL[P] without "
       "spelling LDP-2 out: this instance is ropesim's reading), with a0 -> a, b0 -> b, a1 -> "
       "c, b1 -> d, b2 -> e over {a,b,c,d,e,f}. Left-deterministic, hence LTL[P] (LC25 Thm "
       "4.1)."},
      {"RDP-1",
       {"a", "b", "c", "d"},
       "(a|c|d)*a(b|d)*",
       "(!a & !c) S (a & !P b)",
       "none",
       "LC25 RDP-1 = (Sigma\\{b0})* a (Sigma\\{a,b1})* (THEORY §8) with b0 -> b, b1 -> c, over "
       "{a,b,c,d}: the last a has no b before it and no c after it. Star-free, so in LTL = "
       "LTL[S] (the formula uses S). Not in LTL[P,MOD] (RoPE-X Thm 3.3, THEORY §5 T6): the "
       "minimal DFA has states q0 (no a yet or a c after the last a, no b) and q1 (accepting, "
       "no b) with a^k: q0 -> q1 and c^k: q1 -> q0 for every k, a cycle in every k-automaton."},
      {"DYCK-(1,2)",
       {"a", "b"},
       "(a(ab)*b)*",
       "!P(b & !P true) & !P(a & Y a & (!(b & Y b) S (a & Y a))) & !P(b & Y b & !(!(b & Y b) S "
       "(a & Y a))) & (!P true | Y b & !(!(b & Y b) S (a & Y a)))",
       "none",
       "LC25 DYCK-(1,2) = (a(ab)*b)* (THEORY §8): balanced a/b brackets of depth <= 2. "
       "Star-free (every word acts on the depths 0,1,2 either as a partial identity or by a "
       "nonzero shift, so w^3 = w^4: aperiodic), hence in LTL = LTL[S]: with H = !(b & Y b) S "
       "(a & Y a) (the last doubled letter is aa), a word is in the language iff it starts with "
       "a, the doubled letters aa and bb alternate starting with aa, and it is empty or ends "
       "with b after a bb (or none). Not in LTL[P,MOD] (RoPE-X Thm 3.3): the minimal DFA "
       "(depths 0,1,2 and a sink) has, for every even k, blocks a(ab)^((k-2)/2)a: 0 -> 2 and "
       "b(ab)^((k-2)/2)b: 2 -> 0, and for every odd k, (ab)^((k-1)/2)a: 0 -> 1 and "
       "b(ab)^((k-1)/2): 1 -> 0, a cycle in every k-automaton."},
  };
  return languages;
}

}  // namespace

std::span<const ZooLanguage> zoo() { return table(); }

const ZooLanguage& zoo_language(std::string_view name) {
  for (const ZooLanguage& language : table()) {
    if (language.name == name) return language;
  }
  std::string names;
  for (const ZooLanguage& language : table()) {
    if (!names.empty()) names += ", ";
    names += language.name;
  }
  throw InvalidArgument("zoo: unknown language '" + std::string(name) + "' (known: " + names + ")");
}

}  // namespace ropesim::ltl
