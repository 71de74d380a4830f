//===- ShardOptimizerState.cpp - ZeRO stage 1 across ranks ----------------===//
//
// Each parameter's update, and the optimizer state only it reads, runs on
// one rank of a distributed run (graph.shard on the ops, `shard` on the
// state's graph.weight); graph.owner_broadcast hands the new value to every
// rank before its graph.assign.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "runtime/include/modelc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

namespace modelc {
#define GEN_PASS_DEF_SHARDOPTIMIZERSTATEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// Which rank's work a value is: none yet (its readers are writes of state
/// not yet decided), one shard's, or every rank's.
struct Tag {
  enum Kind { None, Shard, All } kind = None;
  int64_t shard = 0;

  static Tag all() { return {All, 0}; }
  static Tag of(int64_t shard) { return {Shard, shard}; }
  bool operator==(const Tag &o) const {
    return kind == o.kind && (kind != Shard || shard == o.shard);
  }
  /// The work of a value both `this` and `o` need.
  Tag join(Tag o) const {
    if (kind == None)
      return o;
    if (o.kind == None || *this == o)
      return *this;
    return all();
  }
};

/// The state weight's decision: not yet made, the shard that alone reads
/// it, or kept on every rank.
struct StateChoice {
  enum Kind { Unknown, Shard, Everywhere } kind = Unknown;
  int64_t shard = 0;
};

/// Bytes of a weight's data.
int64_t weightBytes(WeightOp weight) {
  RankedTensorType type = weight.getTensorType();
  return type.getNumElements() *
         static_cast<int64_t>(elementBytes(type.getElementType()));
}

struct ShardOptimizerStatePass
    : modelc::impl::ShardOptimizerStatePassBase<ShardOptimizerStatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gradients = module.lookupSymbol<func::FuncOp>("gradients");
    auto parameters =
        gradients ? gradients->getAttrOfType<ArrayAttr>("graph.parameters")
                  : ArrayAttr();
    step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!parameters || !step || step.isExternal()) {
      emitError(module.getLoc())
          << "modelc-shard-optimizer-state: no entry points 'gradients' "
             "(with graph.parameters) and 'train_step' (run "
             "modelc-differentiate and modelc-build-optimizer first)";
      return signalPassFailure();
    }
    chooseShards(module, parameters);
    Block &body = step.getBody().front();
    insertBroadcasts(body);
    findCandidates(module, body);

    // Tags and the state's choices depend on each other (a state's update
    // feeds its own write): repeat until neither changes. Each round either
    // settles or moves a weight towards "everywhere", which is final.
    for (int round = 0;; ++round) {
      computeTags(body);
      if (!decideState())
        break;
      if (round > 2 * static_cast<int>(candidates.size()) + 4) {
        // Not expected (a choice moves only towards "everywhere" or
        // between shards of one parameter's chain): all state stays on
        // every rank, which is always safe.
        for (auto &[name, choice] : candidates)
          choice.kind = StateChoice::Everywhere;
        computeTags(body);
        break;
      }
    }
    // Without state one rank alone holds, sharding would only add the
    // broadcasts: every rank computes every update, as without the pass.
    if (llvm::none_of(candidates, [](auto &entry) {
          return entry.second.kind == StateChoice::Shard;
        })) {
      for (OwnerBroadcastOp broadcast : broadcasts) {
        broadcast.getResult().replaceAllUsesWith(broadcast.getInput());
        broadcast->erase();
      }
      return;
    }
    apply(module, body);
  }

  /// The parameters, largest first, numbered 0, 1, ... (a stable order for
  /// equal sizes: the order of graph.parameters).
  void chooseShards(ModuleOp module, ArrayAttr parameters) {
    SmallVector<std::pair<int64_t, StringAttr>> sizes;
    for (Attribute a : parameters) {
      StringAttr name = cast<FlatSymbolRefAttr>(a).getAttr();
      sizes.push_back({weightBytes(module.lookupSymbol<WeightOp>(name)), name});
    }
    llvm::stable_sort(sizes,
                      [](auto &a, auto &b) { return a.first > b.first; });
    for (auto [index, entry] : llvm::enumerate(sizes))
      shardOf[entry.second] = static_cast<int64_t>(index);
  }

  /// A parameter's new value reaches every rank from its owner.
  void insertBroadcasts(Block &body) {
    for (AssignOp assign :
         llvm::make_early_inc_range(body.getOps<AssignOp>())) {
      auto it = shardOf.find(assign.getNameAttr().getAttr());
      if (it == shardOf.end())
        continue;
      OpBuilder builder(assign);
      auto broadcast = OwnerBroadcastOp::create(
          builder, assign.getLoc(), assign.getValue().getType(),
          assign.getValue(), builder.getI64IntegerAttr(it->second));
      assign.getValueMutable().assign(broadcast.getResult());
      broadcasts.push_back(broadcast);
    }
  }

  /// Optimizer state that may go to one rank: writable weights that start
  /// as zeros, are not parameters, are written in train_step and are used
  /// nowhere else.
  void findCandidates(ModuleOp module, Block &body) {
    llvm::DenseSet<StringAttr> written;
    for (AssignOp assign : body.getOps<AssignOp>())
      written.insert(assign.getNameAttr().getAttr());
    for (WeightOp weight : module.getOps<WeightOp>()) {
      StringAttr name = weight.getSymNameAttr();
      if (!weight.getWritable() || !weight.getZeros() ||
          shardOf.contains(name) || !written.contains(name))
        continue;
      bool elsewhere = false;
      if (auto uses = SymbolTable::getSymbolUses(weight, module))
        for (const SymbolTable::SymbolUse &use : *uses)
          elsewhere |= use.getUser()->getParentOfType<func::FuncOp>() != step;
      if (!elsewhere)
        candidates[name] = {};
    }
    for (WeightRefOp ref : body.getOps<WeightRefOp>())
      refs[ref.getNameAttr().getAttr()].push_back(ref);
  }

  /// What the use of a value by `user` (as operand `index`) asks of it.
  Tag useTag(Operation *user, unsigned index) {
    if (auto assign = dyn_cast<AssignOp>(user)) {
      if (index != 0)
        return {}; // `after`: orders the write, reads nothing
      auto it = candidates.find(assign.getNameAttr().getAttr());
      if (it == candidates.end())
        return Tag::all();
      switch (it->second.kind) {
      case StateChoice::Unknown:
        return {};
      case StateChoice::Shard:
        return Tag::of(it->second.shard);
      case StateChoice::Everywhere:
        return Tag::all();
      }
    }
    if (auto broadcast = dyn_cast<OwnerBroadcastOp>(user))
      return Tag::of(broadcast.getShardAttr().getInt());
    return tags.lookup(user);
  }

  /// Each op's tag: the join of what its uses ask (users come later in the
  /// block). Collectives and ops without results but assigns (the return)
  /// run on every rank.
  void computeTags(Block &body) {
    tags.clear();
    for (Operation &op : llvm::reverse(body)) {
      Tag tag;
      if (isa<AllReduceOp, OwnerBroadcastOp>(op) ||
          (op.getNumResults() == 0 && !isa<AssignOp>(op))) {
        tag = Tag::all();
      } else if (auto assign = dyn_cast<AssignOp>(op)) {
        tag = useTag(&op, 0);
      } else {
        for (OpOperand &use : op.getUses())
          tag = tag.join(useTag(use.getOwner(), use.getOperandNumber()));
      }
      tags[&op] = tag;
    }
  }

  /// The join of what the ops that read state weight `name` are, and
  /// whether some are none yet (they feed only writes of undecided state).
  /// Through views too: an op that reads a view of the state reads the
  /// state (the view prints no code; its readers must be guarded).
  std::pair<Tag, bool> readersOf(StringAttr name) {
    Tag readers;
    bool undecided = false;
    SmallVector<Value> work;
    for (WeightRefOp ref : refs.lookup(name))
      work.push_back(ref.getResult());
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        // A read that only orders a write (`after`) reads nothing.
        if (isa<AssignOp>(use.getOwner()) && use.getOperandNumber() != 0)
          continue;
        if (isView(use.getOwner())) {
          work.push_back(use.getOwner()->getResult(0));
          continue;
        }
        Tag t = useTag(use.getOwner(), use.getOperandNumber());
        undecided |= t.kind == Tag::None;
        readers = readers.join(t);
      }
    }
    return {readers, undecided};
  }

  /// A state weight whose readers are one shard's work goes to that shard
  /// (readers that feed only writes of undecided state wait: a state's
  /// old value may feed its own write alone, as with --accumulate's
  /// "keep the old value" select); one read by more stays everywhere.
  /// At a fixpoint, what is still undecided, and a shard some reader no
  /// longer serves, stays everywhere. Returns whether a choice changed.
  bool decideState() {
    bool changed = false;
    auto set = [&](StateChoice &choice, StateChoice next) {
      if (next.kind != choice.kind || next.shard != choice.shard) {
        choice = next;
        changed = true;
      }
    };
    for (auto &[name, choice] : candidates) {
      if (choice.kind == StateChoice::Everywhere)
        continue;
      Tag readers = readersOf(name).first;
      if (readers.kind == Tag::All)
        set(choice, {StateChoice::Everywhere, 0});
      else if (readers.kind == Tag::Shard)
        set(choice, {StateChoice::Shard, readers.shard});
    }
    if (changed)
      return true;
    for (auto &[name, choice] : candidates) {
      if (choice.kind == StateChoice::Everywhere)
        continue;
      auto [readers, undecided] = readersOf(name);
      if (choice.kind == StateChoice::Unknown || undecided ||
          readers.kind != Tag::Shard || readers.shard != choice.shard)
        set(choice, {StateChoice::Everywhere, 0});
    }
    return changed;
  }

  /// Writes the decisions down: graph.shard on each shard's ops, `shard` on
  /// the state weights one rank holds; a broadcast of a value every rank
  /// computes anyway goes.
  void apply(ModuleOp module, Block &body) {
    for (OwnerBroadcastOp &broadcast : broadcasts) {
      Operation *def = broadcast.getInput().getDefiningOp();
      Tag t = def ? tags.lookup(def) : Tag::all();
      if (t.kind == Tag::Shard && t.shard == broadcast.getShardAttr().getInt())
        continue;
      broadcast.getResult().replaceAllUsesWith(broadcast.getInput());
      tags.erase(broadcast);
      broadcast->erase();
      broadcast = nullptr;
    }
    llvm::erase(broadcasts, nullptr);
    sinkBroadcasts(body);
    Builder builder(module.getContext());
    for (Operation &op : body)
      if (Tag t = tags.lookup(&op); t.kind == Tag::Shard)
        op.setAttr(GraphDialect::kShardAttrName,
                   builder.getI64IntegerAttr(t.shard));
    // What a rank holds: the report's figures for 2, 4 and 8 ranks (the
    // rank with the most bytes).
    llvm::DenseMap<int64_t, int64_t> shardBytes;
    int64_t weights = 0, total = 0;
    for (auto &[name, choice] : candidates) {
      if (choice.kind != StateChoice::Shard)
        continue;
      auto weight = module.lookupSymbol<WeightOp>(name);
      weight.setShardAttr(builder.getI64IntegerAttr(choice.shard));
      int64_t bytes = weightBytes(weight);
      shardBytes[choice.shard] += bytes;
      total += bytes;
      ++weights;
    }
    if (!weights)
      return;
    SmallVector<int64_t> ranks = {2, 4, 8}, most;
    for (int64_t r : ranks) {
      SmallVector<int64_t> held(r, 0);
      for (auto [shard, bytes] : shardBytes)
        held[modelc_shard_owner(shard, r)] += bytes;
      most.push_back(*llvm::max_element(held));
    }
    NamedAttribute summary[] = {
        builder.getNamedAttr("weights", builder.getI64IntegerAttr(weights)),
        builder.getNamedAttr("bytes", builder.getI64IntegerAttr(total)),
        builder.getNamedAttr("ranks", builder.getI64ArrayAttr(ranks)),
        builder.getNamedAttr("most_per_rank", builder.getI64ArrayAttr(most))};
    step->setAttr("graph.state_shards", builder.getDictionaryAttr(summary));
  }

  /// Whether an op after `assign` in `body` reads the weight it writes
  /// (through views too): it must read the new value there.
  static bool readAfter(Block &body, AssignOp assign) {
    SmallVector<Value> work;
    for (WeightRefOp ref : body.getOps<WeightRefOp>())
      if (ref.getNameAttr() == assign.getNameAttr())
        work.push_back(ref.getResult());
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (user != assign.getOperation() && assign->isBeforeInBlock(user))
          return true;
        if (isView(user))
          work.push_back(user->getResult(0));
      }
    }
    return false;
  }

  /// Each rank computes its shards' updates back to back, instead of
  /// waiting for each owner in turn: the broadcasts, with the assigns they
  /// feed, go to the end of the step in their order (where nothing after
  /// an assign reads the parameter). modelc-update-weights-in-place then
  /// lets the owner's update and the broadcast write into the parameter,
  /// so the values wait there, not in the arena.
  void sinkBroadcasts(Block &body) {
    Operation *end = body.getTerminator();
    for (OwnerBroadcastOp broadcast : broadcasts) {
      if (!broadcast->hasOneUse())
        continue;
      auto assign = dyn_cast<AssignOp>(*broadcast->getUsers().begin());
      if (!assign || readAfter(body, assign))
        continue;
      broadcast->moveBefore(end);
      assign->moveBefore(end);
    }
  }

  func::FuncOp step;
  llvm::DenseMap<StringAttr, int64_t> shardOf;
  llvm::MapVector<StringAttr, StateChoice> candidates;
  /// The step's reads of each weight.
  llvm::DenseMap<StringAttr, SmallVector<WeightRefOp>> refs;
  llvm::DenseMap<Operation *, Tag> tags;
  SmallVector<OwnerBroadcastOp> broadcasts;
};

} // namespace
