// The default backend follows the hardware: choose_default_backend
// on hand-built Vulkan device lists (a GPU among them -> vulkan; only CPU
// devices such as lavapipe, or none -> cpu with one thread per physical
// core), and physical_cores_in on fake /sys/devices/system/cpu trees
// (hyper-threads sharing a core count once, two packages count apart).

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "loader/backend_choice.h"

using wb::model::BackendChoice;
using wb::model::choose_default_backend;
using wb::model::DeviceSummary;

namespace {

const DeviceSummary kLavapipe{"llvmpipe (LLVM 15.0.6, 256 bits)", "cpu"};
const DeviceSummary kSwiftShader{"SwiftShader Device (LLVM 10.0.0)", "cpu"};
const DeviceSummary kDiscrete{"NVIDIA GeForce RTX 4090", "discrete-gpu"};
const DeviceSummary kIntegrated{"Intel(R) UHD Graphics 770", "integrated-gpu"};

// Writes cpu<N>/topology/{physical_package_id,core_id} under `root`.
void add_cpu(const std::filesystem::path& root, int n, int package, int core) {
    const std::filesystem::path t = root / ("cpu" + std::to_string(n)) / "topology";
    std::filesystem::create_directories(t);
    std::ofstream(t / "physical_package_id") << package << "\n";
    std::ofstream(t / "core_id") << core << "\n";
}

}  // namespace

class TestBackendChoice : public QObject {
    Q_OBJECT
  private slots:
    void discrete_gpu_beside_lavapipe_is_vulkan() {
        for (const auto& devs : {std::vector<DeviceSummary>{kLavapipe, kDiscrete},
                                 std::vector<DeviceSummary>{kDiscrete, kLavapipe}}) {
            const BackendChoice c = choose_default_backend(devs, 8);
            QCOMPARE(c.backend, std::string("vulkan"));
            QCOMPARE(c.threads, 8u);
            QVERIFY2(c.reason.find("NVIDIA GeForce RTX 4090") != std::string::npos,
                     c.reason.c_str());
            QVERIFY2(c.reason.find("discrete GPU") != std::string::npos, c.reason.c_str());
        }
    }

    void integrated_gpu_is_vulkan() {
        const BackendChoice c = choose_default_backend({kIntegrated}, 4);
        QCOMPARE(c.backend, std::string("vulkan"));
        QVERIFY2(c.reason.find("Intel(R) UHD Graphics 770 (integrated GPU)") != std::string::npos,
                 c.reason.c_str());
        // With both, the reason names the device Vulkan picks: the discrete one.
        const BackendChoice both = choose_default_backend({kIntegrated, kDiscrete}, 4);
        QCOMPARE(both.backend, std::string("vulkan"));
        QVERIFY2(both.reason.find("NVIDIA") != std::string::npos, both.reason.c_str());
        // Virtual and "other" devices are not CPU devices either.
        QCOMPARE(choose_default_backend({{"virtio-gpu", "virtual-gpu"}}, 2).backend,
                 std::string("vulkan"));
        QCOMPARE(choose_default_backend({kLavapipe, {"odd", "other"}}, 2).backend,
                 std::string("vulkan"));
    }

    void only_lavapipe_is_cpu() {
        const BackendChoice c = choose_default_backend({kLavapipe}, 6);
        QCOMPARE(c.backend, std::string("cpu"));
        QCOMPARE(c.threads, 6u);
        QCOMPARE(c.reason, std::string("no GPU found: the only Vulkan device, llvmpipe (LLVM "
                                       "15.0.6, 256 bits), is a CPU device; the CPU backend is "
                                       "faster there"));
        const BackendChoice two = choose_default_backend({kLavapipe, kSwiftShader}, 6);
        QCOMPARE(two.backend, std::string("cpu"));
        QVERIFY2(two.reason.find("llvmpipe") != std::string::npos &&
                     two.reason.find("SwiftShader") != std::string::npos,
                 two.reason.c_str());
    }

    void no_device_is_cpu() {
        const BackendChoice c = choose_default_backend({}, 0);
        QCOMPARE(c.backend, std::string("cpu"));
        QCOMPARE(c.threads, 1u);  // never 0 threads
        QVERIFY2(c.reason.find("no Vulkan device") != std::string::npos, c.reason.c_str());
        const BackendChoice e = choose_default_backend({}, 2, "vkCreateInstance: no driver");
        QCOMPARE(e.backend, std::string("cpu"));
        QVERIFY2(e.reason.find("vkCreateInstance: no driver") != std::string::npos,
                 e.reason.c_str());
    }

    void physical_cores_from_topology() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::filesystem::path root = tmp.path().toStdString();
        // Two packages of two cores with two hyper-threads each: 4 cores, 8 CPUs.
        int n = 0;
        for (int package = 0; package < 2; ++package)
            for (int ht = 0; ht < 2; ++ht)
                for (int core = 0; core < 2; ++core) add_cpu(root, n++, package, core);
        // Not CPUs: cpufreq/, cpuidle/ and a cpu folder without topology.
        std::filesystem::create_directories(root / "cpufreq");
        std::filesystem::create_directories(root / "cpuidle");
        std::filesystem::create_directories(root / "cpu99");
        QCOMPARE(wb::model::physical_cores_in(root), 4u);
        QCOMPARE(wb::model::physical_cores_in(root / "missing"), 0u);
        // This machine: at least one, never more than its hardware threads.
        const unsigned here = wb::model::physical_core_count();
        QVERIFY(here >= 1);
        if (std::thread::hardware_concurrency() > 0)
            QVERIFY(here <= std::thread::hardware_concurrency());
    }
};

QTEST_GUILESS_MAIN(TestBackendChoice)
#include "test_backend_choice.moc"
