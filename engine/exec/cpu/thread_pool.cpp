#include "exec/cpu/thread_pool.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace wb::cpu {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spin iterations before sleeping: some tens of microseconds, a little more
// than the gap between two ops of a decode step.
constexpr int kSpin = 2000;

constexpr uint64_t kField = (1u << 20) - 1;
uint64_t next_of(uint64_t s) {
    return s & kField;
}
uint64_t n_of(uint64_t s) {
    return (s >> 20) & kField;
}

}  // namespace

ThreadPool::ThreadPool(unsigned n_threads) {
    if (n_threads == 0) n_threads = std::thread::hardware_concurrency();
    n_threads_ = n_threads == 0 ? 1 : n_threads;
    for (unsigned i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    wake_.fetch_add(1);
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
}

void ThreadPool::work(unsigned thread) {
    uint64_t s = state_.load(std::memory_order_acquire);
    while (next_of(s) < n_of(s)) {
        const Fn* fn = fn_.load(std::memory_order_acquire);
        if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire))
            continue;  // s reloaded
        (*fn)(static_cast<uint32_t>(next_of(s)), thread);
        done_.fetch_add(1, std::memory_order_acq_rel);
        s = state_.load(std::memory_order_acquire);
    }
}

void ThreadPool::worker(unsigned index) {
    uint32_t seen = 0;
    for (;;) {
        uint32_t w = wake_.load(std::memory_order_acquire);
        for (int i = 0; w == seen && i < kSpin; ++i) {
            cpu_relax();
            w = wake_.load(std::memory_order_acquire);
        }
        while (w == seen) {
            wake_.wait(seen, std::memory_order_acquire);
            w = wake_.load(std::memory_order_acquire);
        }
        seen = w;
        if (stop_.load()) return;
        work(index);
    }
}

void ThreadPool::run(uint32_t n_tasks, const Fn& fn) {
    if (n_tasks > kMaxTasks) throw std::invalid_argument("ThreadPool::run: too many tasks");
    if (n_tasks == 0) return;
    if (n_threads_ == 1 || n_tasks == 1) {
        for (uint32_t t = 0; t < n_tasks; ++t) fn(t, 0);
        return;
    }
    const std::lock_guard<std::mutex> one_loop(run_mutex_);
    // Every task of the previous loop is claimed and done, so no worker
    // can claim from it any more: publish the new one.
    const uint64_t gen = (state_.load(std::memory_order_relaxed) >> 40) + 1;
    done_.store(0, std::memory_order_relaxed);
    fn_.store(&fn, std::memory_order_release);
    state_.store(((gen & 0xFFFFFF) << 40) | (uint64_t{n_tasks} << 20), std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_all();
    work(0);
    uint32_t d = done_.load(std::memory_order_acquire);
    for (int i = 0; d != n_tasks && i < kSpin; ++i) {
        cpu_relax();
        d = done_.load(std::memory_order_acquire);
    }
    while (d != n_tasks) {
        std::this_thread::yield();  // a worker holds the last tasks
        d = done_.load(std::memory_order_acquire);
    }
}

std::shared_ptr<ThreadPool> ThreadPool::shared(unsigned n_threads) {
    if (n_threads == 0) n_threads = std::max(1u, std::thread::hardware_concurrency());
    static std::mutex m;
    static std::map<unsigned, std::weak_ptr<ThreadPool>> pools;
    const std::lock_guard<std::mutex> lock(m);
    std::shared_ptr<ThreadPool> p = pools[n_threads].lock();
    if (!p) {
        p = std::make_shared<ThreadPool>(n_threads);
        pools[n_threads] = p;
    }
    return p;
}

}  // namespace wb::cpu
