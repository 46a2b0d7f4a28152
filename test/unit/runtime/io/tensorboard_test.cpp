#include "io/tensorboard.h"

#include "cli/metrics.h"
#include "io/crc32c.h"
#include "io/file_io.h"
#include "test_util.h"

#include <cstdlib>

using namespace lmc::rt;

namespace {

TEST(TensorBoard, RecordFraming) {
  std::string rec = tfRecord("abc");
  ASSERT_EQ(rec.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(rec[0], 3);
  uint32_t lenCrc;
  std::memcpy(&lenCrc, rec.data() + 8, 4);
  EXPECT_EQ(lenCrc, maskedCrc32c(rec.data(), 8));
  EXPECT_EQ(rec.substr(12, 3), "abc");
  uint32_t dataCrc;
  std::memcpy(&dataCrc, rec.data() + 15, 4);
  EXPECT_EQ(dataCrc, maskedCrc32c("abc", 3));
}

TEST(TensorBoard, EventEncoding) {
  // wall_time 1.0 (field 1, fixed64), file_version (field 3).
  std::string v = fileVersionEvent(1.0);
  EXPECT_EQ(v.substr(0, 9), std::string("\x09\0\0\0\0\0\0\xf0\x3f", 9));
  EXPECT_EQ(v.substr(9), std::string("\x1a\x0d") + "brain.Event:2");
  // step 300 = varint ac 02; summary{value{tag "x", simple_value 0.5}}.
  std::string s = scalarEvent(1.0, 300, "x", 0.5f);
  EXPECT_EQ(s.substr(9, 3), "\x10\xac\x02");
  EXPECT_EQ(s.substr(12), std::string("\x2a\x0a\x0a\x08\x0a\x01x\x15\0\0\0\x3f",
                                      12));
}

TEST(TensorBoard, WriterCreatesEventFile) {
  char tmpl[] = "/tmp/lmc-tb-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = std::string(tmpl) + "/logs";
  EventWriter w(dir);
  w.scalar("loss", 1, 2.5);
  w.close();
  EXPECT_NE(w.path().find("/logs/events.out.tfevents."), std::string::npos);
  std::vector<uint8_t> bytes = readFile(w.path());
  EXPECT_EQ(bytes.size(), tfRecord(fileVersionEvent(0)).size() +
                              tfRecord(scalarEvent(0, 1, "loss", 0)).size());
  EXPECT_ERROR_CONTAINS(EventWriter("/nonexistent/x/y"),
                        "cannot create --log-dir '/nonexistent/x/y'");
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}

TEST(TensorBoard, EveryRunWritesAFileOfItsOwn) {
  // Three writers in the same directory within the same second (a resumed
  // run, a restart): each its own file, the earlier ones left whole, and a
  // file already there (another process's) never opened over.
  char tmpl[] = "/tmp/lmc-tb-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = std::string(tmpl) + "/logs";
  std::vector<std::string> paths;
  for (int run = 0; run < 3; ++run) {
    EventWriter w(dir);
    w.scalar("loss", run + 1, 2.5);
    w.close();
    paths.push_back(w.path());
  }
  EXPECT_NE(paths[0], paths[1]);
  EXPECT_NE(paths[1], paths[2]);
  EXPECT_NE(paths[0], paths[2]);
  const size_t oneRun = tfRecord(fileVersionEvent(0)).size() +
                        tfRecord(scalarEvent(0, 1, "loss", 0)).size();
  for (const std::string &path : paths)
    EXPECT_EQ(readFile(path).size(), oneRun) << path;
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}

TEST(Metrics, OptionalFields) {
  StepMetrics m;
  m.step = 10;
  m.loss = 0.5;
  m.lr = 1e-3;
  m.ms = 2;
  m.samplesPerS = 100;
  EXPECT_EQ(formatStepLine(m, 100),
            "step  10/100 | loss 0.500000 | lr 1.000e-03 | 2.00 ms | 100 "
            "samples/s | ETA 0.2s");
  m.gradNorm = 1.23456;
  m.tokensPerS = 6400;
  m.mfu = 0.1234;
  EXPECT_EQ(formatStepLine(m, 100),
            "step  10/100 | loss 0.500000 | lr 1.000e-03 | norm 1.2346 | "
            "2.00 ms | 6400 tok/s | MFU 12.34% | ETA 0.2s");
  m.step = 100; // the last step: no ETA
  m.ms = 75000;
  EXPECT_EQ(formatStepLine(m, 100),
            "step 100/100 | loss 0.500000 | lr 1.000e-03 | norm 1.2346 | "
            "75000.00 ms | 6400 tok/s | MFU 12.34%");
  m.step = 10;
  EXPECT_EQ(formatStepLine(m, 100).substr(formatStepLine(m, 100).rfind('|')),
            "| ETA 1h52m");
  m.step = 99;
  EXPECT_EQ(formatStepLine(m, 100).substr(formatStepLine(m, 100).rfind('|')),
            "| ETA 1m15s");
  m.step = 10;
  m.ms = 2;
  EXPECT_EQ(stepJson(m), "{\"step\":10,\"loss\":0.5,\"lr\":0.001,"
                         "\"grad_norm\":1.23456,\"ms\":2,\"samples_per_s\":100,"
                         "\"tokens_per_s\":6400,\"mfu\":0.1234}");
}

} // namespace
