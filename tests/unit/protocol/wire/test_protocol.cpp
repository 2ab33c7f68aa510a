#define BOOST_TEST_MODULE runtime_protocol
#include <boost/test/unit_test.hpp>

#include "core/random.hpp"
#include "protocol/wire/protocol.hpp"

using namespace slurmtune;

namespace {
std::string error_of(const std::string& bytes) {
  protocol::FrameDecoder decoder;
  decoder.feed(bytes);
  try {
    while (decoder.next()) {
    }
  } catch (const protocol::ProtocolError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(frames_round_trip_through_the_decoder) {
  const std::string payload = R"({"step":3,"metrics":{"val_loss":0.41}})";
  const std::string bytes = protocol::encode_frame(protocol::MessageType::Report, payload);
  BOOST_TEST(bytes.size() == protocol::kHeaderSize + payload.size());
  BOOST_TEST(bytes.substr(0, 4) == std::string("ST\x01\x03"));
  protocol::FrameDecoder decoder;
  decoder.feed(bytes);
  const auto frame = decoder.next();
  BOOST_REQUIRE(frame);
  BOOST_TEST((frame->type == protocol::MessageType::Report));
  BOOST_TEST(frame->payload == payload);
  BOOST_TEST(!decoder.next());
  const auto object = protocol::payload_object(*frame);
  BOOST_TEST(std::get<double>(object.at("step").data) == 3.0);
}

BOOST_AUTO_TEST_CASE(frames_split_at_every_byte_boundary_decode_the_same) {
  std::string stream;
  for (int i = 0; i < 5; ++i)
    stream +=
        protocol::encode_frame(protocol::MessageType::Ask, "{\"n\":" + std::to_string(i) + "}");
  for (std::size_t chunk = 1; chunk <= 13; ++chunk) {
    protocol::FrameDecoder decoder;
    int frames = 0;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      decoder.feed(std::string_view(stream).substr(at, chunk));
      while (const auto f = decoder.next()) {
        BOOST_REQUIRE(f->payload == "{\"n\":" + std::to_string(frames) + "}");
        ++frames;
      }
    }
    BOOST_TEST(frames == 5);
    BOOST_TEST(decoder.pending() == 0U);
  }
}

BOOST_AUTO_TEST_CASE(garbage_is_refused_at_the_first_bad_byte) {
  BOOST_TEST(error_of("GET / HTTP/1.1\r\n").find("bad magic") != std::string::npos);
  BOOST_TEST(error_of("SX").find("bad magic") != std::string::npos);
  BOOST_TEST(error_of(std::string("ST\x02", 3)).find("protocol version 2") != std::string::npos);
  BOOST_TEST(error_of(std::string("ST\x01\x63", 4)).find("unknown message type 99") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(oversized_frames_are_refused_before_their_payload_arrives) {
  const std::string header("ST\x01\x03\x7f\xff\xff\xff", 8);
  BOOST_TEST(error_of(header).find("exceeds the limit") != std::string::npos);
  BOOST_CHECK_THROW(protocol::encode_frame(protocol::MessageType::Report,
                                           std::string(protocol::kMaxPayload + 1, 'x')),
                    protocol::ProtocolError);
  BOOST_CHECK_NO_THROW(protocol::encode_frame(protocol::MessageType::Report,
                                              std::string(protocol::kMaxPayload, 'x')));
}

BOOST_AUTO_TEST_CASE(payloads_must_be_json_objects) {
  for (const char* bad : {"[1,2]", "not json", "", "{\"a\":"}) {
    BOOST_TEST_CONTEXT(bad) {
      protocol::FrameDecoder decoder;
      decoder.feed(protocol::encode_frame(protocol::MessageType::Hello, bad));
      const auto frame = decoder.next();
      BOOST_REQUIRE(frame);
      BOOST_CHECK_THROW(protocol::payload_object(*frame), protocol::ProtocolError);
    }
  }
}

BOOST_AUTO_TEST_CASE(random_bytes_never_crash_the_decoder) {
  slurmtune::core::Xoshiro256 rng(9);
  int refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(rng.below(40), '\0');
    for (auto& c : bytes)
      c = static_cast<char>(rng.below(256));
    if (rng.below(2)) bytes.insert(0, "ST\x01");  // sometimes a plausible start
    protocol::FrameDecoder decoder;
    decoder.feed(bytes);
    try {
      while (const auto f = decoder.next()) {
        try {
          protocol::payload_object(*f);
        } catch (const protocol::ProtocolError&) {
        }
      }
    } catch (const protocol::ProtocolError&) {
      ++refused;
    }
  }
  BOOST_TEST(refused > 15000);
}
