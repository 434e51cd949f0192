#include "mask/config_walker.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

inline uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xC2B2AE3D27D4EB4Full;
}

// Doubles an open-addressing table of ids once it is half full.
template <typename Id, typename HashOf>
void GrowSlots(std::vector<Id>* slots, Id empty, size_t count, HashOf hash_of) {
  if (count * 2 <= slots->size()) return;
  std::vector<Id> old(slots->size() * 2, empty);
  old.swap(*slots);
  const size_t mask = slots->size() - 1;
  for (Id id : old) {
    if (id == empty) continue;
    size_t j = static_cast<size_t>(hash_of(id)) & mask;
    while ((*slots)[j] != empty) j = (j + 1) & mask;
    (*slots)[j] = id;
  }
}

// Per thread: the epoch of the last walk that met each state (walks on a thread run one at a
// time; the table is reset, never reallocated per walk).
struct MetMarks {
  std::vector<uint32_t> epoch;
  uint32_t last = 0;
};

MetMarks& ThreadMetMarks() {
  thread_local MetMarks marks;
  return marks;
}

bool SameNode(const GssNode& a, const GssNode& b) {
  return a.cont_head == b.cont_head && a.cont_count == b.cont_count && a.rule == b.rule &&
         a.accepts == b.accepts;
}

bool SameCont(const GssCont& a, const GssCont& b) {
  return a.state == b.state && a.node == b.node && a.next == b.next;
}

}  // namespace

void ConfigWalker::Begin(Recognizer* recognizer, size_t max_token_length) {
  recognizer_ = recognizer;
  max_level_ = max_token_length;
  if (level_config_.size() < max_token_length + 1) {
    level_config_.resize(max_token_length + 1);
    transient_.resize(max_token_length + 1);
    complete_upto_.resize(max_token_length + 1);
  }
  Gss& gss = recognizer_->gss();
  gss.SetSpeculative(true);
  scopes_.assign(1, Scope());
  scopes_[0].mark = gss.Mark();
  saved_nodes_.clear();
  saved_conts_.clear();
  scope_slots_.assign(64, kNil);
  configs_.clear();
  item_pool_.clear();
  config_slots_.assign(64, -1);
  rows_.clear();
  shapes_.clear();
  shape_code_.clear();
  shape_slots_.assign(64, kNil);
  materialized_ = 0;
  held_ = 0;
  recognizer_level_ = 0;
  limited_ = false;
  states_met_.clear();
  MetMarks& marks = ThreadMetMarks();
  if (++marks.last == 0) {
    std::fill(marks.epoch.begin(), marks.epoch.end(), 0);
    marks.last = 1;
  }
  met_epoch_ = marks.last;
  level_config_[0] = InternConfig(0, recognizer_->items(), recognizer_->complete());
  Transient& t = transient_[0];
  t.complete = recognizer_->complete();
  t.mark = gss.Mark();
  t.items = recognizer_->items();
  complete_upto_[0] = 0;
}

void ConfigWalker::End() {
  // A thread keeps the marks of ordinary automata, not those of a huge one.
  constexpr size_t kKeptMarks = size_t{1} << 20;
  std::vector<uint32_t>& marks = ThreadMetMarks().epoch;
  if (marks.size() > kKeptMarks) std::vector<uint32_t>().swap(marks);
  held_ = 0;
  recognizer_level_ = kNil;
  SyncRecognizer();
  recognizer_->gss().RestoreMark(scopes_[0].mark);
  recognizer_->gss().SetSpeculative(false);
  recognizer_ = nullptr;
}

void ConfigWalker::NoteStates(const Item* first, const Item* last) {
  std::vector<uint32_t>& epoch = ThreadMetMarks().epoch;
  for (const Item* it = first; it != last; ++it) {
    if (it->state >= epoch.size()) {
      epoch.resize(std::max<size_t>(size_t{it->state} + 1, recognizer_->automaton().num_states()),
                   0);
    }
    if (epoch[it->state] == met_epoch_) continue;
    epoch[it->state] = met_epoch_;
    states_met_.push_back(it->state);
  }
}

StateId ConfigWalker::ItemsShift(int32_t from, int32_t to) const {
  const Config& a = configs_[static_cast<size_t>(from)];
  const Config& b = configs_[static_cast<size_t>(to)];
  if (a.scope != b.scope || a.items_size != b.items_size || a.items_size == 0) return 0;
  const Item* x = ItemsOf(a);
  const Item* y = ItemsOf(b);
  if (y[0].state <= x[0].state) return 0;
  const StateId shift = y[0].state - x[0].state;
  for (uint32_t i = 0; i < a.items_size; ++i) {
    if (y[i].node != x[i].node || y[i].state != x[i].state + shift) return 0;
  }
  return shift;
}

void ConfigWalker::ItemStates(int32_t config, std::vector<StateId>* out) const {
  const Config& c = configs_[static_cast<size_t>(config)];
  out->clear();
  for (uint32_t i = 0; i < c.items_size; ++i) out->push_back(ItemsOf(c)[i].state);
}

void ConfigWalker::NoteStatesMet(const std::vector<StateId>& states) {
  sorted_.clear();
  for (StateId s : states) sorted_.push_back({s, 0});
  NoteStates(sorted_.data(), sorted_.data() + sorted_.size());
}

// The configuration (scope, items) in canonical order, interned on first sight; kTransient when
// the table is full.
int32_t ConfigWalker::InternConfig(uint32_t scope, const std::vector<Item>& items, bool complete) {
  sorted_.assign(items.begin(), items.end());
  std::sort(sorted_.begin(), sorted_.end(), [](const Item& a, const Item& b) {
    return a.node != b.node ? a.node < b.node : a.state < b.state;
  });
  uint64_t hash = Mix(scope, complete ? 1 : 0);
  for (const Item& it : sorted_) hash = Mix(hash, (uint64_t{it.state} << 32) | it.node);
  const size_t mask = config_slots_.size() - 1;
  size_t i = static_cast<size_t>(hash) & mask;
  for (; config_slots_[i] >= 0; i = (i + 1) & mask) {
    const Config& c = configs_[static_cast<size_t>(config_slots_[i])];
    if (c.hash != hash || c.scope != scope || c.items_size != sorted_.size() ||
        c.complete != complete) {
      continue;
    }
    const Item* own = ItemsOf(c);
    bool same = true;
    for (size_t k = 0; k < sorted_.size() && same; ++k) {
      same = own[k].state == sorted_[k].state && own[k].node == sorted_[k].node;
    }
    if (same) return config_slots_[i];
  }
  if (configs_.size() >= kMaxConfigs) return kTransient;
  Config c;
  c.scope = scope;
  c.items_begin = static_cast<uint32_t>(item_pool_.size());
  c.items_size = static_cast<uint32_t>(sorted_.size());
  c.hash = hash;
  c.complete = complete;
  item_pool_.insert(item_pool_.end(), sorted_.begin(), sorted_.end());
  NoteStates(sorted_.data(), sorted_.data() + sorted_.size());
  const auto id = static_cast<int32_t>(configs_.size());
  configs_.push_back(c);
  rows_.resize(rows_.size() + 256, kUnknown);
  config_slots_[i] = id;
  GrowSlots(&config_slots_, -1, configs_.size(),
            [&](int32_t k) { return configs_[static_cast<size_t>(k)].hash; });
  return id;
}

// The child of `parent` whose segment is what the last step appended after `before` (the
// parent's stack), interned by content; kNil when the table is full.
uint32_t ConfigWalker::InternScope(uint32_t parent, const Gss::MarkPoint& before) {
  const Gss& gss = recognizer_->gss();
  const Gss::MarkPoint after = gss.Mark();
  const GssNode* nodes = gss.nodes_data() + before.nodes;
  const GssCont* conts = gss.conts_data() + before.conts;
  const size_t num_nodes = after.nodes - before.nodes;
  const size_t num_conts = after.conts - before.conts;
  uint64_t hash = Mix(parent, (uint64_t{num_nodes} << 32) | num_conts);
  for (size_t k = 0; k < num_nodes; ++k) {
    hash = Mix(hash, (uint64_t{nodes[k].rule} << 33) | (uint64_t{nodes[k].cont_head} << 1) |
                         (nodes[k].accepts ? 1 : 0));
  }
  for (size_t k = 0; k < num_conts; ++k) {
    hash = Mix(hash, (uint64_t{conts[k].state} << 32) | conts[k].node);
  }
  const size_t mask = scope_slots_.size() - 1;
  size_t i = static_cast<size_t>(hash) & mask;
  for (; scope_slots_[i] != kNil; i = (i + 1) & mask) {
    const Scope& s = scopes_[scope_slots_[i]];
    if (s.hash != hash || s.parent != parent || s.mark.nodes != after.nodes ||
        s.mark.conts != after.conts) {
      continue;
    }
    bool same = true;
    for (size_t k = 0; k < num_nodes && same; ++k) {
      same = SameNode(saved_nodes_[s.nodes_begin + k], nodes[k]);
    }
    for (size_t k = 0; k < num_conts && same; ++k) {
      same = SameCont(saved_conts_[s.conts_begin + k], conts[k]);
    }
    if (same) return scope_slots_[i];
  }
  if (scopes_.size() >= kMaxScopes) return kNil;
  Scope s;
  s.parent = parent;
  s.depth = scopes_[parent].depth + 1;
  s.mark = after;
  s.nodes_begin = static_cast<uint32_t>(saved_nodes_.size());
  s.conts_begin = static_cast<uint32_t>(saved_conts_.size());
  s.hash = hash;
  saved_nodes_.insert(saved_nodes_.end(), nodes, nodes + num_nodes);
  saved_conts_.insert(saved_conts_.end(), conts, conts + num_conts);
  const auto id = static_cast<uint32_t>(scopes_.size());
  scopes_.push_back(s);
  scope_slots_[i] = id;
  GrowSlots(&scope_slots_, kNil, scopes_.size(), [&](uint32_t k) { return scopes_[k].hash; });
  return id;
}

// The configuration the recognizer reached by a step from a level of `scope` (whose stack ended
// at `before`): in the smallest scope of the chain that holds every node its items sit in, or in
// a new child scope holding what the step created.
int32_t ConfigWalker::InternResult(uint32_t scope, const Gss::MarkPoint& before) {
  const std::vector<Item>& items = recognizer_->items();
  uint32_t top = 0;
  for (const Item& it : items) top = std::max(top, it.node);
  uint32_t target = scope;
  if (top < before.nodes) {
    // Nodes of a scope's segment only reach nodes of the same segment or below.
    while (target != 0 && scopes_[scopes_[target].parent].mark.nodes > top) {
      target = scopes_[target].parent;
    }
  } else {
    target = InternScope(scope, before);
    if (target == kNil) return kTransient;
  }
  return InternConfig(target, items, recognizer_->complete());
}

// Makes the recognizer's stack exactly the chain of `scope`: back to the deepest scope shared
// with what it holds, then the saved segments down to `scope`.
void ConfigWalker::Materialize(uint32_t scope) {
  Gss& gss = recognizer_->gss();
  uint32_t have = materialized_ == kNil ? 0 : materialized_;
  uint32_t want = scope;
  path_.clear();
  while (scopes_[want].depth > scopes_[have].depth) {
    path_.push_back(want);
    want = scopes_[want].parent;
  }
  while (scopes_[have].depth > scopes_[want].depth) have = scopes_[have].parent;
  while (have != want) {
    path_.push_back(want);
    want = scopes_[want].parent;
    have = scopes_[have].parent;
  }
  gss.RestoreMark(scopes_[have].mark);
  for (size_t k = path_.size(); k-- > 0;) {
    const Scope& s = scopes_[path_[k]];
    const Gss::MarkPoint& from = scopes_[s.parent].mark;
    gss.AppendSaved(saved_nodes_.data() + s.nodes_begin, s.mark.nodes - from.nodes,
                    saved_conts_.data() + s.conts_begin, s.mark.conts - from.conts, s.mark);
  }
  materialized_ = scope;
}

// Puts the recognizer at level held_: its items, over the level's stack.
void ConfigWalker::SyncRecognizer() {
  const int32_t config = level_config_[held_];
  if (config >= 0) {
    const Config& c = configs_[static_cast<size_t>(config)];
    Materialize(c.scope);
    if (recognizer_level_ != held_) {
      recognizer_->SetState(ItemsOf(c), ItemsOf(c) + c.items_size, c.complete);
    }
  } else if (recognizer_level_ != held_) {
    const Transient& t = transient_[held_];
    recognizer_->gss().RestoreMark(t.mark);
    recognizer_->SetState(t.items, t.complete);
    materialized_ = kNil;
  }
  recognizer_level_ = held_;
}

void ConfigWalker::SameStepRange(uint8_t byte, uint32_t* lo, uint32_t* hi) const {
  const Automaton& a = recognizer_->automaton();
  uint32_t low = 0;
  uint32_t high = 255;
  for (const Item& it : recognizer_->items()) {
    for (const ByteEdge& e : a.ByteEdges(it.state)) {
      if (e.hi < byte) {
        low = std::max<uint32_t>(low, e.hi + 1u);
      } else if (e.lo > byte) {
        high = std::min<uint32_t>(high, e.lo - 1u);
        break;  // edges are sorted by lo: the rest start higher still
      } else {
        low = std::max<uint32_t>(low, e.lo);
        high = std::min<uint32_t>(high, e.hi);
      }
    }
  }
  *lo = low;
  *hi = high;
}

void ConfigWalker::Memoize(int32_t source, int32_t entry, uint32_t lo, uint32_t hi) {
  int32_t* row = RowOf(source);
  for (uint32_t b = lo; b <= hi; ++b) row[b] = entry;
}

// One recognizer step from level held_; its result is memoized, for every byte the items treat
// like this one, when the level is in the memo (steps from transient levels stay transient).
bool ConfigWalker::Step(uint8_t byte) {
  const int32_t source = level_config_[held_];
  SyncRecognizer();
  uint32_t same_lo = byte;
  uint32_t same_hi = byte;
  if (source >= 0) SameStepRange(byte, &same_lo, &same_hi);
  Gss& gss = recognizer_->gss();
  const Gss::MarkPoint before = gss.Mark();
  ++recognizer_steps_;
  bool ok = false;
  try {
    ok = recognizer_->AdvanceByte(byte);
  } catch (const LimitError&) {
    limited_ = true;  // the recognizer's items are unchanged; drop what the step created
    gss.RestoreMark(before);
    return false;
  }
  if (!ok) {
    gss.RestoreMark(before);
    if (source >= 0) Memoize(source, kRefused, same_lo, same_hi);
    return false;
  }
  const bool complete = recognizer_->complete();
  int32_t target = kTransient;
  if (source >= 0) {
    target = InternResult(configs_[static_cast<size_t>(source)].scope, before);
    if (target >= 0) Memoize(source, target * 2 + (complete ? 1 : 0), same_lo, same_hi);
  }
  ++held_;
  level_config_[held_] = target;
  complete_upto_[held_] = static_cast<uint8_t>((complete ? 1 : 0) | complete_upto_[held_ - 1]);
  if (target >= 0) {
    const Config& c = configs_[static_cast<size_t>(target)];
    // Canonical item order, so that equal configurations make equal segments.
    recognizer_->SetState(ItemsOf(c), ItemsOf(c) + c.items_size, c.complete);
    // The stack holds the source's scope chain, and the step's segment on top: the target's
    // own when the target is a child of the source's scope.
    const uint32_t from = configs_[static_cast<size_t>(source)].scope;
    materialized_ = c.scope != from && scopes_[c.scope].parent == from ? c.scope : from;
  } else {
    Transient& t = transient_[held_];
    t.complete = complete;
    t.items.assign(recognizer_->items().begin(), recognizer_->items().end());
    NoteStates(t.items.data(), t.items.data() + t.items.size());
    t.mark = gss.Mark();
    materialized_ = kNil;
  }
  recognizer_level_ = held_;
  return true;
}

const GssNode& ConfigWalker::NodeAt(uint32_t scope, uint32_t id) const {
  for (uint32_t s = scope; s != 0; s = scopes_[s].parent) {
    const size_t first = scopes_[scopes_[s].parent].mark.nodes;
    if (id >= first) return saved_nodes_[scopes_[s].nodes_begin + (id - first)];
  }
  return recognizer_->gss().node(id);  // the base scope's nodes stay in place during the walk
}

const GssCont& ConfigWalker::ContAt(uint32_t scope, uint32_t id) const {
  for (uint32_t s = scope; s != 0; s = scopes_[s].parent) {
    const size_t first = scopes_[scopes_[s].parent].mark.conts;
    if (id >= first) return saved_conts_[scopes_[s].conts_begin + (id - first)];
  }
  return recognizer_->gss().cont(id);
}

// The canonical code of a configuration: the items a byte step can move (those at states with
// byte edges; the others were completed when they were added), by state, then every node they
// reach, numbered in the order first met (items first, then each node's continuations in list
// order), with its rule, accepts flag and continuations. False when the code is not canonical
// (items sharing a state) or too large.
bool ConfigWalker::WriteShape(const Config& c, std::vector<uint32_t>* code) {
  const Automaton& a = recognizer_->automaton();
  sorted_.clear();
  for (const Item* it = ItemsOf(c); it != ItemsOf(c) + c.items_size; ++it) {
    if (!a.ByteEdges(it->state).empty()) sorted_.push_back(*it);
  }
  std::sort(sorted_.begin(), sorted_.end(),
            [](const Item& x, const Item& y) { return x.state < y.state; });
  shape_nodes_.clear();
  auto number = [&](uint32_t node) {
    for (size_t k = 0; k < shape_nodes_.size(); ++k) {
      if (shape_nodes_[k] == node) return static_cast<uint32_t>(k);
    }
    shape_nodes_.push_back(node);
    return static_cast<uint32_t>(shape_nodes_.size() - 1);
  };
  code->clear();
  code->push_back(static_cast<uint32_t>(sorted_.size()));
  for (size_t k = 0; k < sorted_.size(); ++k) {
    if (k > 0 && sorted_[k].state == sorted_[k - 1].state) return false;
    code->push_back(sorted_[k].state);
    code->push_back(number(sorted_[k].node));
  }
  for (size_t k = 0; k < shape_nodes_.size(); ++k) {
    if (shape_nodes_.size() > kMaxShapeNodes) return false;
    const GssNode& n = NodeAt(c.scope, shape_nodes_[k]);
    code->push_back(n.rule);
    code->push_back(n.accepts ? 1 : 0);
    code->push_back(n.cont_count);
    for (uint32_t e = n.cont_head; e != kNil;) {
      const GssCont& cont = ContAt(c.scope, e);
      code->push_back(cont.state);
      code->push_back(number(cont.node));
      e = cont.next;
    }
  }
  return true;
}

uint32_t ConfigWalker::InternShape(const std::vector<uint32_t>& code) {
  uint64_t hash = code.size();
  for (uint32_t v : code) hash = Mix(hash, v);
  const size_t mask = shape_slots_.size() - 1;
  size_t i = static_cast<size_t>(hash) & mask;
  for (; shape_slots_[i] != kNil; i = (i + 1) & mask) {
    const Shape& s = shapes_[shape_slots_[i]];
    if (s.hash == hash && s.code_size == code.size() &&
        std::equal(code.begin(), code.end(), shape_code_.begin() + s.code_begin)) {
      return shape_slots_[i];
    }
  }
  Shape s;
  s.code_begin = static_cast<uint32_t>(shape_code_.size());
  s.code_size = static_cast<uint32_t>(code.size());
  s.hash = hash;
  shape_code_.insert(shape_code_.end(), code.begin(), code.end());
  const auto id = static_cast<uint32_t>(shapes_.size());
  shapes_.push_back(s);
  shape_slots_[i] = id;
  GrowSlots(&shape_slots_, kNil, shapes_.size(), [&](uint32_t k) { return shapes_[k].hash; });
  return id;
}

uint32_t ConfigWalker::WidestByteRange(int32_t config) const {
  const Config& c = configs_[static_cast<size_t>(config)];
  const Automaton& a = recognizer_->automaton();
  uint32_t widest = 0;
  for (const Item* it = ItemsOf(c); it != ItemsOf(c) + c.items_size; ++it) {
    for (const ByteEdge& e : a.ByteEdges(it->state)) {
      widest = std::max<uint32_t>(widest, uint32_t{e.hi} - e.lo + 1u);
    }
  }
  return widest;
}

uint64_t ConfigWalker::StatesKey(int32_t config) {
  Config& c = configs_[static_cast<size_t>(config)];
  if (c.states_key != 0) return c.states_key;
  const Automaton& a = recognizer_->automaton();
  uint64_t sum = 0;  // order-free: the items are sorted by node
  uint64_t count = 0;
  for (const Item* it = ItemsOf(c); it != ItemsOf(c) + c.items_size; ++it) {
    if (a.ByteEdges(it->state).empty()) continue;
    sum += Mix(0, it->state);
    ++count;
  }
  c.states_key = Mix(sum, count) | 1;
  return c.states_key;
}

uint32_t ConfigWalker::ShapeOf(int32_t config) {
  Config& c = configs_[static_cast<size_t>(config)];
  if (c.shape != kNil) return c.shape;
  if (WriteShape(c, &code_)) {
    c.shape = InternShape(code_);
  } else {
    c.shape = static_cast<uint32_t>(shapes_.size());  // a shape no other configuration gets
    shapes_.push_back(Shape());
  }
  return c.shape;
}

}  // namespace gbnf::detail
