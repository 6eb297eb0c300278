// Stop-string matching on streamed text; cases worked out by hand.

#include <QtTest>
#include <string>
#include <vector>

#include "scheduler/stop_strings.h"

using wb::scheduler::StopStringMatcher;

class TestStopStrings : public QObject {
    Q_OBJECT

  private slots:
    void no_stops_streams_everything() {
        StopStringMatcher m({});
        QCOMPARE(m.push("Once"), std::string("Once"));
        QCOMPARE(m.push(" upon"), std::string(" upon"));
        QCOMPARE(m.flush(), std::string());
        QCOMPARE(m.text(), std::string("Once upon"));
        QVERIFY(!m.stopped());
    }

    void stop_inside_one_piece() {
        StopStringMatcher m({"END"});
        QCOMPARE(m.push("abc"), std::string("abc"));
        QCOMPARE(m.push("xENDyz"), std::string("x"));
        QVERIFY(m.stopped());
        QCOMPARE(m.text(), std::string("abcx"));
        QCOMPARE(m.push("more"), std::string());  // nothing after a stop
        QCOMPARE(m.flush(), std::string());
    }

    void stop_split_over_pieces_is_held_back() {
        StopStringMatcher m({"</s>"});
        QCOMPARE(m.push("Hi <"), std::string("Hi "));  // "<" may start "</s>"
        QCOMPARE(m.push("/"), std::string());          // "</" still may
        QCOMPARE(m.push("s>!"), std::string());        // "</s>" found: nothing after "Hi "
        QVERIFY(m.stopped());
        QCOMPARE(m.text(), std::string("Hi "));
    }

    void false_alarm_is_released() {
        StopStringMatcher m({"</s>"});
        QCOMPARE(m.push("a<"), std::string("a"));
        QCOMPARE(m.push("b"), std::string("<b"));  // "<b" cannot start "</s>"
        QCOMPARE(m.push("<"), std::string());
        QCOMPARE(m.flush(), std::string("<"));  // end of request: held text goes out
        QCOMPARE(m.text(), std::string("a<b<"));
        QVERIFY(!m.stopped());
    }

    void earliest_of_several_stops_wins() {
        StopStringMatcher m({"cd", "b"});
        QCOMPARE(m.push("abcd"), std::string("a"));
        QCOMPARE(m.text(), std::string("a"));
        StopStringMatcher e({"", "zz"});  // the empty stop string is ignored
        QCOMPARE(e.push("abc"), std::string("abc"));
    }
};

QTEST_GUILESS_MAIN(TestStopStrings)
#include "test_stop_strings.moc"
