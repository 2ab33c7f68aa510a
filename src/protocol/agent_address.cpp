#include "protocol/agent_address.hpp"

#include <fstream>

namespace slurmtune::protocol {

std::string node_file_name(std::string_view prefix, std::string_view node) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string name(prefix);
  for (const char c : node) {
    name += kDigits[static_cast<unsigned char>(c) >> 4];
    name += kDigits[static_cast<unsigned char>(c) & 0xF];
  }
  return name;
}

std::string agent_address_file(const std::string& folder, std::string_view node) {
  return folder + "/" + node_file_name("agent-", node);
}

std::optional<std::string> published_agent_address(const std::string& folder,
                                                   std::string_view node) {
  std::ifstream in(agent_address_file(folder, node));
  std::string address;
  // Only a local socket: the file cannot send a trial's credential anywhere else.
  if (!in || !std::getline(in, address) || address.size() <= 5 || !address.starts_with("unix:"))
    return std::nullopt;
  return address;
}

}  // namespace slurmtune::protocol
