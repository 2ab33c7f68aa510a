// ROUTED, CHANNEL_CLOSED and BUSY as types: round trips, nesting, and refusals naming
// what is wrong.
#define BOOST_TEST_MODULE protocol_route_messages
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/route_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "unit/protocol/message_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::protocol;
using testing::refusal;
const auto object = testing::payload;

namespace {
// The one frame `bytes` hold.
Frame frame_of(const std::string& bytes) {
  FrameDecoder decoder;
  decoder.feed(bytes);
  auto frame = decoder.next();
  BOOST_REQUIRE(frame);
  BOOST_REQUIRE(decoder.pending() == 0u);
  return *frame;
}

std::string routed_refusal(const std::string& payload) {
  try {
    decode_routed(Frame{MessageType::Routed, payload});
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_routed_frame_carries_one_whole_frame_and_its_channel) {
  const std::string report = encode_frame(MessageType::Report, R"({"step": 1, "metrics": {}})");
  const Routed routed = decode_routed(frame_of(encode_routed(kMaxChannel, report)));
  BOOST_TEST(routed.channel == kMaxChannel);
  BOOST_TEST((routed.frame.type == MessageType::Report));
  BOOST_TEST(routed.frame.payload == R"({"step": 1, "metrics": {}})");
}

// A relay tree nests ROUTED frames: the largest payload still fits at every level up to
// kMaxRouteDepth, and one more level is refused.
BOOST_AUTO_TEST_CASE(routed_frames_nest_to_the_route_depth) {
  std::string bytes = encode_frame(MessageType::Report, std::string(kMaxPayload, ' '));
  for (std::size_t level = 1; level <= kMaxRouteDepth; ++level)
    bytes = encode_routed(level, bytes);
  for (std::size_t level = kMaxRouteDepth; level >= 1; --level) {
    const Routed routed = decode_routed(frame_of(bytes));
    BOOST_TEST(routed.channel == level);
    bytes = encode_frame(routed.frame.type, routed.frame.payload);
  }
  BOOST_TEST(frame_of(bytes).payload.size() == kMaxPayload);
  std::string deeper = encode_frame(MessageType::Report, std::string(kMaxPayload, ' '));
  for (std::size_t level = 0; level <= kMaxRouteDepth; ++level) {
    if (level == kMaxRouteDepth) {
      BOOST_CHECK_THROW(encode_routed(1, deeper), ProtocolError);
      break;
    }
    deeper = encode_routed(1, deeper);
  }
}

BOOST_AUTO_TEST_CASE(a_malformed_routed_payload_is_refused) {
  const std::string ask = encode_frame(MessageType::Ask, "{}");
  const std::string channel_one("\0\0\0\0\0\0\0\1", 8);
  BOOST_TEST(routed_refusal("short") == "ROUTED: a payload of 5 bytes holds no channel and frame");
  BOOST_TEST(routed_refusal(std::string(8, '\0') + ask) ==
             "ROUTED: channel 0 is outside 1 to 2^53");
  BOOST_TEST(routed_refusal(std::string(8, '\xff') + ask).find("is outside 1 to 2^53") !=
             std::string::npos);
  BOOST_TEST(routed_refusal(channel_one + ask + ask) ==
             "ROUTED: channel 1 does not carry exactly one whole frame");
  BOOST_TEST(routed_refusal(channel_one + ask.substr(0, ask.size() - 1)) ==
             "ROUTED: channel 1 does not carry exactly one whole frame");
  BOOST_TEST(routed_refusal(channel_one + "GET / HTTP/1.1\r\n") ==
             "bad magic (not a slurmtune client)");
  BOOST_TEST(routed_refusal(channel_one + ask).empty());
}

BOOST_AUTO_TEST_CASE(channel_closed_and_busy_round_trip_and_check_their_fields) {
  const ChannelClosed closed{42, "the process closed its connection"};
  BOOST_TEST((decode_channel_closed(object(encode(closed))) == closed));
  BOOST_TEST(
      refusal(decode_channel_closed, R"({"channel": 0})") ==
      "CHANNEL_CLOSED: 'channel' must be a whole number from 1 to 9007199254740992, not 0.0");
  BOOST_TEST(
      refusal(decode_channel_closed, R"({"channel": 1.5})") ==
      "CHANNEL_CLOSED: 'channel' must be a whole number from 1 to 9007199254740992, not 1.5");
  const Busy busy{"512 connections are open already", 2};
  BOOST_TEST((decode_busy(object(encode(busy))) == busy));
  BOOST_TEST(refusal(decode_busy, R"({"why": "x", "retry_after_s": 0})") ==
             "BUSY: 'retry_after_s' must be from 0.1 to 600 seconds, not 0.0");
  BOOST_TEST(refusal(decode_busy, R"({"why": "x", "retry_after_s": 1e9})") ==
             "BUSY: 'retry_after_s' must be from 0.1 to 600 seconds, not 1e+09");
  BOOST_TEST(refusal(decode_busy, R"({"why": "x"})") == "BUSY: 'retry_after_s' must be a number");
}
