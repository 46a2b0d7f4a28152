//===- profile_report.cpp - The --profile table --------------------------===//

#include "cli/profile_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

namespace lmc::rt {

namespace {

/// `label` with each run of digits replaced by `*`: the same node of every
/// layer (/blocks.3/fc/MatMul -> /blocks.*/fc/MatMul) falls in one group.
std::string foldNumbers(const std::string &label) {
  std::string folded;
  for (size_t i = 0; i < label.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(label[i]))) {
      folded += label[i];
      continue;
    }
    folded += '*';
    while (i + 1 < label.size() &&
           std::isdigit(static_cast<unsigned char>(label[i + 1])))
      ++i;
  }
  return folded;
}

struct Row {
  double ms = 0, calls = 0;
  std::string kind, function, label;
};

/// The rows as a table with aligned columns.
std::string formatRows(const std::vector<Row> &rows, double stepMs) {
  size_t kindWidth = 4, functionWidth = 8;
  for (const Row &row : rows) {
    kindWidth = std::max(kindWidth, row.kind.size());
    functionWidth = std::max(functionWidth, row.function.size());
  }
  char line[640];
  std::snprintf(line, sizeof line, "%11s  %6s  %6s  %-*s  %-*s  %s\n",
                "ms/step", "share", "calls", int(kindWidth), "kind",
                int(functionWidth), "function", "label");
  std::string out = line;
  for (const Row &row : rows) {
    std::snprintf(line, sizeof line, "%11.3f  %5.1f%%  %6g  %-*s  %-*s  %s\n",
                  row.ms, 100.0 * row.ms / stepMs, row.calls, int(kindWidth),
                  row.kind.c_str(), int(functionWidth), row.function.c_str(),
                  row.label.c_str());
    out += line;
  }
  return out;
}

} // namespace

std::string formatProfile(const std::vector<ProfileRegion> &regions,
                          const std::vector<RegionTime> &times,
                          const ProfiledSteps &steps, size_t rows) {
  const int64_t count = steps.last - steps.first + 1;
  if (count <= 0 || steps.ns == 0)
    return "profile: no step was timed\n";
  const double perStep = 1e-6 / double(count); // ns total -> ms per step
  const double stepMs = double(steps.ns) * perStep;
  auto share = [&](double ms) { return 100.0 * ms / stepMs; };

  std::vector<size_t> order(std::min(regions.size(), times.size()));
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return times[a].ns > times[b].ns;
  });

  char head[160];
  if (count > 1)
    std::snprintf(head, sizeof head,
                  "profile: steps %lld-%lld (%lld timed), %.3f ms per step\n",
                  (long long)steps.first, (long long)steps.last,
                  (long long)count, stepMs);
  else
    std::snprintf(head, sizeof head, "profile: step %lld, %.3f ms\n",
                  (long long)steps.first, stepMs);
  std::string out = head;
  std::map<std::string, double> byKind;
  std::map<std::tuple<std::string, std::string, std::string>, Row> byNode;
  std::vector<Row> top;
  double timed = 0, rest = 0;
  size_t restCount = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const ProfileRegion &region = regions[order[i]];
    const RegionTime &time = times[order[i]];
    if (time.calls == 0) // another entry point's (eval_step, grad_step)
      continue;
    const Row row{double(time.ns) * perStep, double(time.calls) / double(count),
                  region.kind, region.function, region.label};
    byKind[row.kind] += row.ms;
    timed += row.ms;
    Row &node = byNode[{row.kind, row.function, foldNumbers(row.label)}];
    node.ms += row.ms;
    node.calls += row.calls;
    if (top.size() < rows) {
      top.push_back(row);
    } else {
      rest += row.ms;
      ++restCount;
    }
  }
  out += formatRows(top, stepMs);
  if (restCount > 0) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "%11.3f  %5.1f%%  (the other %zu regions)\n", rest,
                  share(rest), restCount);
    out += line;
  }

  // The same node of every layer together: where a transformer's time
  // goes, whatever its depth.
  std::vector<Row> nodes;
  for (auto &[key, row] : byNode) {
    std::tie(row.kind, row.function, row.label) = key;
    nodes.push_back(row);
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const Row &a, const Row &b) { return a.ms > b.ms; });
  if (nodes.size() > rows)
    nodes.resize(rows);
  out += "by node, numbers in names folded (/blocks.*/):\n";
  out += formatRows(nodes, stepMs);

  std::vector<std::pair<std::string, double>> kinds(byKind.begin(),
                                                    byKind.end());
  std::stable_sort(
      kinds.begin(), kinds.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  kinds.emplace_back("outside the regions", std::max(0.0, stepMs - timed));
  out += "by kind:";
  for (size_t i = 0; i < kinds.size(); ++i) {
    char part[160];
    std::snprintf(part, sizeof part, "%s %s %.3f ms (%.1f%%)", i ? "," : "",
                  kinds[i].first.c_str(), kinds[i].second,
                  share(kinds[i].second));
    out += part;
  }
  return out + "\n";
}

} // namespace lmc::rt
